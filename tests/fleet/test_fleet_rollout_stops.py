"""A fleet rollout stops at the first host whose new server is not healthy, on this run and the next.

Within one run, the later hosts' servers wait (depends_on) for the failed one and are never
registered. On the next `pulumi up`, the failed server (saved with an init error) must be replaced
and waited for again: an empty update would succeed at once and let the rollout move on to the next
host, replacing a healthy server by a broken one, host after host. Sequence under the modelled
engine (tests/scenario): a release everywhere, a broken one, the next up, the fix.
"""

from __future__ import annotations

from tests.fleet.fleet_stacks import IDS, fleet_config, fleet_hosts_config, fleet_spec
from tests.scenario.docker_host import DockerProvider
from tests.scenario.engine import Engine

BROKEN = {"digest": "sha256:" + "b0" * 32}


def _server(host_id: str) -> str:
    return f"vllm-qwen36-{host_id}-server"


def _images(docker: DockerProvider) -> dict[str, str]:
    """What each host's server runs, by host id: the image reference behind its container."""
    found = {}
    for host_id, host in zip(IDS, fleet_hosts_config(), strict=True):
        daemon = docker.daemon({"host": host["dockerHost"]})
        (server,) = [c for c in daemon.containers.values() if c.name == "vllm-qwen36"]
        found[host_id] = daemon.images[server.image]
    return found


def test_a_failed_host_stops_the_rollout_on_every_later_run_until_it_serves() -> None:
    docker = DockerProvider()
    engine = Engine({"docker": docker}, stack="fleet")
    assert engine.up(fleet_config()).ok
    before = fleet_spec().settings.image.reference
    release = fleet_spec(image=BROKEN).settings.image.reference
    first_host = docker.daemon({"host": fleet_hosts_config()[0]["dockerHost"]})
    first_host.never_healthy.add(release)

    rollout = engine.up(fleet_config(image=BROKEN))
    assert not rollout.ok
    assert [rollout.of(_server(h)) for h in IDS] == [["delete-replaced", "replace-failed"], [], []]

    retried = engine.up(fleet_config(image=BROKEN))  # the next run, nothing changed
    assert not retried.ok
    assert [retried.of(_server(h)) for h in IDS] == [["delete-replaced", "replace-failed"], [], []]
    assert _images(docker) == {"gpu01": release, "gpu02": before, "gpu03": before}

    first_host.never_healthy.clear()
    fixed = engine.up(fleet_config(image=BROKEN))
    assert fixed.ok
    assert [(s.op, s.name) for s in fixed.steps if s.name in {_server(h) for h in IDS}] == [
        (op, _server(h)) for h in IDS for op in ("delete-replaced", "replace")]  # in turn, host by host
    assert set(_images(docker).values()) == {release}
