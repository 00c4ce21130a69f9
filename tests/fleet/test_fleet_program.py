"""A Docker fleet through the real program under Pulumi's mock engine: one provider and one
deployment per host, named by host, servers replaced one after the other, one endpoint list."""

from __future__ import annotations

import json
from typing import Any

from components.program import EXPORTS, FLEET
from tests.conftest import shipped_stack
from tests.fleet.fleet_stacks import IDS, TARGET, fleet_config, fleet_hosts_config, fleet_spec
from tests.pulumi_harness import ProgramRun, Registered
from tests.safety.helpers import SENTINELS
from vllm_serving.fleet import fleet_hosts
from vllm_serving.views.fleet import planned_fleet_resources

PROVIDER = "pulumi:providers:docker"
SERVER = "vllm-serving:docker:VllmServer"
CONTAINER = "docker:index/container:Container"
STACK = "fleet"


def _names(run: ProgramRun) -> set[tuple[str, str]]:
    return {(r.type, r.name) for r in run.resources}


def _of_host(run: ProgramRun, host_id: str) -> dict[tuple[str, str], Registered]:
    """The host's resources by (type, name): its deployment and everything under it."""
    prefix = f"vllm-qwen36-{host_id}"
    return {(r.type, r.name): r for r in run.resources if r.name == prefix or r.name.startswith(prefix + "-")}


def _servers(run: ProgramRun) -> dict[str, Registered]:
    return {r.name: r for r in run.resources if r.type == CONTAINER and r.name.endswith("-server")}


def _urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[1]


def test_three_hosts_register_three_deployments(program) -> None:
    run = program(fleet_config(), stack=STACK)
    spec = fleet_spec()
    assert sorted(_names(run)) == sorted(planned_fleet_resources(spec, fleet_hosts(spec)))
    deployments = [r.name for r in run.resources if r.type == "vllm-serving:docker:VllmDeployment"]
    assert sorted(deployments) == [f"vllm-qwen36-{i}" for i in IDS]
    # one provider per host, on that host's endpoint, with the stack's ssh options as its default
    providers = {r.name: r.inputs for r in run.resources if r.type == PROVIDER}
    assert {name: p["host"] for name, p in providers.items()} == {
        "vllm-qwen36-gpu01-docker": "ssh://deploy@gpu01.example.internal",
        "vllm-qwen36-gpu02-docker": "ssh://deploy@gpu02.example.internal",
        "vllm-qwen36-gpu03-docker": "ssh://deploy@10.0.0.13",
    }
    # (a provider's inputs travel as JSON text)
    assert all(json.loads(p["sshOpts"]) == ["-o", "StrictHostKeyChecking=yes"] for p in providers.values())


def test_each_host_uses_its_own_provider_and_gpus(program) -> None:
    run = program(fleet_config(), stack=STACK)
    for host_id in IDS:
        own = f"{PROVIDER}::vllm-qwen36-{host_id}-docker::"
        for (type_, name), r in _of_host(run, host_id).items():
            if type_.startswith("docker:"):
                assert own in r.provider, f"{name} uses {r.provider}"
    devices = {name: r.inputs["deviceRequests"][0]["deviceIds"] for name, r in _servers(run).items()}
    # gpu02 gives its own deviceIds; the others take hardware.deviceIds
    assert devices == {"vllm-qwen36-gpu01-server": ["0", "1", "2", "3"],
                       "vllm-qwen36-gpu02-server": ["4", "5", "6", "7"],
                       "vllm-qwen36-gpu03-server": ["0", "1", "2", "3"]}
    # the same container (name, port, argv) on every host
    assert len({(r.inputs["name"], str(r.inputs["ports"]), str(r.inputs["command"]))
                for r in _servers(run).values()}) == 1


def test_servers_are_replaced_one_host_at_a_time(program) -> None:
    run = program(fleet_config(), stack=STACK)
    components = {r.name: r for r in run.resources if r.type == SERVER}
    waits = {name: sorted(_urn_name(d) for d in r.dependencies) for name, r in components.items()}
    # each host's server waits for the previous host's server container, in target.hosts order
    assert waits == {"vllm-qwen36-gpu01-server": [],
                     "vllm-qwen36-gpu02-server": ["vllm-qwen36-gpu01-server"],
                     "vllm-qwen36-gpu03-server": ["vllm-qwen36-gpu02-server"]}
    for name, r in components.items():
        assert all(d.startswith("urn:") and f"{CONTAINER}::" in d for d in r.dependencies), name
    # only the servers wait: providers, image pulls and the preflights of every host run at once
    others = [r for r in run.resources if r.type not in (SERVER, CONTAINER)]
    assert all(not any(_urn_name(d).endswith("-server") for d in r.dependencies) for r in others)


def test_outputs_per_host_and_one_endpoint_list(program) -> None:
    run = program(fleet_config(), stack=STACK)
    out = run.outputs
    assert set(out) == set(EXPORTS[FLEET])
    assert list(out["hosts"]) == list(IDS)
    assert out["endpoints"] == ["http://gpu01.example.internal:8000/v1", "http://gpu02.example.internal:8000/v1",
                                "http://gpu03.example.internal:8000/v1"]
    gpu03 = out["hosts"]["gpu03"]
    assert gpu03["healthUrl"] == "http://gpu03.example.internal:8000/health"
    assert gpu03["metricsUrl"] == "http://gpu03.example.internal:8000/metrics"
    assert gpu03["containerName"] == "vllm-qwen36"
    assert gpu03["logsCommand"] == "docker -H ssh://deploy@10.0.0.13 logs --tail 200 vllm-qwen36"
    assert '"device=0,1,2,3"' in gpu03["dockerRunCommand"]
    assert out["hosts"]["gpu02"]["logsCommand"].startswith("docker -H ssh://deploy@gpu02.example.internal ")
    assert out["imageDigest"] == gpu03["imageDigest"]
    # the release another stack promotes carries the digest the hosts pulled
    assert out["imageDigest"] == f"vllm/vllm-openai@{out['release']['image']['digest']}"
    assert out["capacity"]["tp"] == 4


def _drop(hosts: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    return [h for i, h in enumerate(hosts) if i != index]


def test_removing_a_host_removes_only_its_resources(program) -> None:
    hosts = fleet_hosts_config()
    before = program(fleet_config(hosts), stack=STACK)
    after = program(fleet_config(_drop(hosts, 1)), stack=STACK)
    assert not _of_host(after, "gpu02")
    assert _names(before) - _names(after) == set(_of_host(before, "gpu02"))
    assert _names(after) <= _names(before)
    for host_id in ("gpu01", "gpu03"):
        was, now = _of_host(before, host_id), _of_host(after, host_id)
        assert set(was) == set(now)
        # same names and the same inputs: Pulumi sees no change to the hosts that stay
        assert {k: r.inputs for k, r in was.items()} == {k: r.inputs for k, r in now.items()}
    # gpu03's server now waits for gpu01's (a dependency, not an input: no replacement)
    server = next(r for r in after.resources if r.type == SERVER and r.name == "vllm-qwen36-gpu03-server")
    assert [_urn_name(d) for d in server.dependencies] == ["vllm-qwen36-gpu01-server"]


def test_adding_a_host_adds_only_its_resources(program) -> None:
    hosts = fleet_hosts_config()
    before = program(fleet_config(hosts), stack=STACK)
    after = program(fleet_config([*hosts, {"dockerHost": "ssh://deploy@gpu04.example.internal"}]), stack=STACK)
    assert _names(after) - _names(before) == set(_of_host(after, "gpu04"))
    assert _names(before) <= _names(after)
    assert after.outputs["endpoints"][-1] == "http://gpu04.example.internal:8000/v1"


def test_reordering_hosts_keeps_every_resource_name(program) -> None:
    hosts = fleet_hosts_config()
    before = program(fleet_config(hosts), stack=STACK)
    after = program(fleet_config(list(reversed(hosts))), stack=STACK)
    assert _names(before) == _names(after)
    assert list(after.outputs["hosts"]) == list(reversed(IDS))


def test_a_promoted_fleet_deploys_the_release_on_every_host(program) -> None:
    """A production fleet promotes staging's release: every host runs the same pinned digest, and
    the outputs are the fleet's, known before the release resolves."""
    staging = program(shipped_stack("v100-staging"), stack="v100-staging", secrets=SENTINELS).outputs
    prod = shipped_stack("v100-prod")
    prod[TARGET] = {"kind": "docker", "hosts": [{"dockerHost": "ssh://deploy@gpu-v100-01"},
                                                 {"dockerHost": "ssh://deploy@gpu-v100-02"}]}
    run = program(prod, stack="v100-prod", secrets=SENTINELS,
                  stack_outputs={"organization/vllm-serving/v100-staging": staging})
    assert set(run.outputs) == set(EXPORTS[FLEET])
    pinned = {r.inputs["name"] for r in run.resources if r.type == "docker:index/remoteImage:RemoteImage"}
    assert len(pinned) == 1 and next(iter(pinned)).endswith("@" + staging["release"]["image"]["digest"])
    assert list(run.outputs["hosts"]) == ["gpu-v100-01", "gpu-v100-02"]
