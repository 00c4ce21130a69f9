"""Day 2 on a Docker host whose daemon.json sets log options: the server is not replaced on every run.

dockerd merges daemon.json's `log-opts` into the container's (moby daemon/logs.go
`mergeAndVerifyLogConfig`), and the provider reads the merged map back into `log_opts`, a field
that forces a replacement and is not computed (terraform-provider-docker v4.5.0
resource_docker_container_funcs.go `containerLogOptsForState`, resource_docker_container.go
`log_opts`). Without ignoring what the daemon adds, every `pulumi up` would replace the server,
delete-first: a model load's outage each time. The stack's own options still replace it.
"""

from __future__ import annotations

from typing import Any

from tests.scenario.docker_host import Daemon, DockerProvider
from tests.scenario.engine import Engine
from tests.stack_builders import stack_values

SECRETS = {"registryPassword": "SENTINEL-day2-registry-pw"}
SERVER = "vllm-qwen35-27b-server"
# a common daemon.json: rotation for every container, non-blocking logging, compressed files
DAEMON_JSON = {"max-size": "10m", "max-file": "5", "compress": "true", "mode": "non-blocking",
               "max-buffer-size": "4m"}


def _engine(config: dict[str, Any]) -> tuple[Engine, Daemon]:
    docker = DockerProvider()
    daemon = docker.daemon_of(config)
    daemon.log_opts = dict(DAEMON_JSON)
    return Engine({"docker": docker}, stack="v100"), daemon


def _server_log_opts(daemon: Daemon) -> dict[str, str]:
    (server,) = [c for c in daemon.containers.values() if c.name == "vllm-qwen35-27b"]
    return server.log_opts


def test_log_options_the_daemon_adds_never_replace_the_server() -> None:
    config = stack_values("v100")
    engine, daemon = _engine(config)
    assert engine.up(config, SECRETS).ok
    # the provider read the daemon's additions back into the state, beside the stack's own
    read_back = engine.entry(SERVER).outputs["logOpts"]
    assert read_back["compress"] == "true" and read_back["max-size"] == "100m"

    assert engine.up(config, SECRETS).of(SERVER) == ["same"]
    engine.refresh()  # reads the merged map into the inputs too
    assert engine.up(config, SECRETS).of(SERVER) == ["same"]


def test_a_changed_log_option_of_the_stack_still_replaces_the_server() -> None:
    config = stack_values("v100")
    engine, daemon = _engine(config)
    assert engine.up(config, SECRETS).ok

    bigger = stack_values("v100", container={"logMaxSize": "500m"})
    changed = engine.up(bigger, SECRETS)
    assert changed.ok and changed.of(SERVER) == ["delete-replaced", "replace"]
    assert _server_log_opts(daemon) == {**DAEMON_JSON, "max-size": "500m", "max-file": "3"}


def test_a_restart_policy_change_updates_the_server_in_place_on_a_host_that_adds_log_options() -> None:
    """The bridge drops an ignored map key's diff but keeps the map's count diff (`log_opts.%`,
    ForceNew): beside any other change it would replace the server. The whole map is ignored."""
    config = stack_values("v100")
    engine, daemon = _engine(config)
    assert engine.up(config, SECRETS).ok
    (before,) = [c.id for c in daemon.containers.values() if c.name == "vllm-qwen35-27b"]

    always = stack_values("v100", container={"restart": "always"})
    changed = engine.up(always, SECRETS)
    assert changed.ok and changed.of(SERVER) == ["update"]  # the provider's Update applies it in place
    assert [c.id for c in daemon.containers.values() if c.name == "vllm-qwen35-27b"] == [before]
    assert engine.up(always, SECRETS).of(SERVER) == ["same"]
