"""A fleet's servers are replaced one host at a time by the real Pulumi engine, not all deleted first.

Each server container is replaced delete-first (fixed name and host port). The engine then also
deletes first every resource that takes an INPUT from it (pulumi pkg/resource/deploy/
step_generator.go, `calculateDependentReplacements`: property dependencies only), while a
`depends_on` edge only delays the dependent's registration until the dependency's replacement
finished (pkg/resource/deploy/source_eval.go, RegisterResource answers once its step is done). So
the chain must be made of `depends_on` edges alone; docs/provider-behaviour.md.
"""

from __future__ import annotations

from typing import Any

from tests.fleet.fleet_stacks import IDS, fleet_config
from tests.pulumi_harness import ProgramRun

CONTAINER = "docker:index/container:Container"
SERVER = "vllm-serving:docker:VllmServer"


def _server_name(host_id: str) -> str:
    return f"vllm-qwen36-{host_id}-server"


def _depends_on_a_server(urns: tuple[str, ...], host_id: str) -> bool:
    return any(u.endswith(f"::{_server_name(h)}") for u in urns for h in IDS if h != host_id)


def test_no_server_takes_an_input_from_another_hosts_server(program: Any) -> None:
    run: ProgramRun = program(fleet_config(), stack="fleet")
    containers = {r.name: r for r in run.resources if r.type == CONTAINER and r.name.endswith("-server")}
    assert sorted(containers) == sorted(_server_name(h) for h in IDS)
    for host_id in IDS:
        # a container's dependencies are its inputs' (it has no depends_on of its own)
        container = containers[_server_name(host_id)]
        assert not _depends_on_a_server(container.dependencies, host_id), container.name
    # the order is kept by the components' depends_on, which the containers wait for as children
    components = {r.name: r for r in run.resources if r.type == SERVER}
    chained = [h for h in IDS if _depends_on_a_server(components[_server_name(h)].dependencies, h)]
    assert chained == list(IDS[1:])


def test_each_hosts_server_runs_on_that_hosts_docker(program: Any) -> None:
    # the chain's depends_on must not cost a server its host: a container on the default provider
    # would start on whatever Docker `pulumi` finds locally, not on the fleet host it names
    run: ProgramRun = program(fleet_config(), stack="fleet")
    # tests/fixtures/fleet: gpu01 and gpu02 named by their ssh host, gpu03 by its `name`
    docker_hosts = {"gpu01": "ssh://deploy@gpu01.example.internal", "gpu02": "ssh://deploy@gpu02.example.internal",
                    "gpu03": "ssh://deploy@10.0.0.13"}
    providers = {r.name: r for r in run.resources if r.type == "pulumi:providers:docker"}
    for host_id in IDS:
        (container,) = [r for r in run.resources if r.type == CONTAINER and r.name == _server_name(host_id)]
        provider = providers[f"vllm-qwen36-{host_id}-docker"]
        assert container.provider.split("::")[-1].startswith(f"{provider.name}"), (host_id, container.provider)
        assert provider.inputs["host"] == docker_hosts[host_id]


def test_every_hosts_deployment_is_a_child_of_the_fleet(program: Any) -> None:
    # a URN carries its ancestors' types (VllmFleet$VllmDeployment$...:Container): a deployment
    # registered outside the fleet would give every host's volumes and server new URNs, and the
    # next `pulumi up` would create them anew and delete the old ones (servers all down at once)
    run: ProgramRun = program(fleet_config(), stack="fleet")
    (fleet,) = [r for r in run.resources if r.type == "vllm-serving:docker:VllmFleet"]
    deployments = [r for r in run.resources if r.type == "vllm-serving:docker:VllmDeployment"]
    assert sorted(d.name for d in deployments) == sorted(f"vllm-qwen36-{h}" for h in IDS)
    for deployment in deployments:
        assert deployment.parent.endswith(f"$vllm-serving:docker:VllmFleet::{fleet.name}"), deployment.parent
