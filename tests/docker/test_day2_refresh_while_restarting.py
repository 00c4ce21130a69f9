"""A `pulumi refresh` that ran while dockerd restarted the server: documented, with the commands.

Read sets `ports` from the container's published ports when it runs or `must_run` is set, and only
when the state has ports (terraform-provider-docker v4.5.0 resource_docker_container_funcs.go
lines 800-806, `d.GetOk("ports")`). A restarting container counts as running and publishes none,
so the refresh stores `ports: []` in the state and the inputs (pulumi-terraform-bridge
`ExtractInputsFromOutputs`, isRefresh), and no later refresh reads them back. `ports` forces a
replacement, and cannot be ignored instead: an ignored input keeps its old value even in a
replacement, so a changed host port would never apply. docs/provider-behaviour.md gives the
commands: refresh without the server while it restarts, or accept one replacement.
"""

from __future__ import annotations

from tests.scenario.docker_host import DockerProvider
from tests.scenario.engine import Engine
from tests.stack_builders import stack_values

SECRETS = {"registryPassword": "SENTINEL-day2-registry-pw"}
SERVER, CONTAINER_NAME = "vllm-qwen35-27b-server", "vllm-qwen35-27b"


def _restarting() -> tuple[Engine, DockerProvider, dict[str, object]]:
    config = stack_values("v100")
    docker = DockerProvider()
    engine = Engine({"docker": docker}, stack="v100")
    assert engine.up(config, SECRETS).ok
    docker.daemon_of(config).restart_loop(CONTAINER_NAME)
    return engine, docker, config


def test_a_refresh_during_a_restart_stores_no_ports_and_no_later_refresh_reads_them_back() -> None:
    engine, docker, config = _restarting()
    engine.refresh()
    assert engine.entry(SERVER).outputs["ports"] == engine.entry(SERVER).inputs["ports"] == []
    server = docker.daemon_of(config).by_name(CONTAINER_NAME)
    assert server is not None
    server.status = "running"
    engine.refresh()  # running again: still none
    assert engine.entry(SERVER).outputs["ports"] == []
    assert engine.up(config, SECRETS).of(SERVER) == ["delete-replaced", "replace"]
    assert engine.up(config, SECRETS).of(SERVER) == ["same"]  # one replacement, then back in step


def test_a_refresh_that_leaves_the_restarting_server_out_keeps_it_in_place() -> None:
    engine, _, config = _restarting()
    engine.refresh(exclude=(engine.entry(SERVER).urn,))  # pulumi refresh --exclude '<server urn>'
    assert engine.up(config, SECRETS).of(SERVER) == ["same"]
