"""What pulumi-docker and Docker read from the resources the Docker components register: which
input changes replace the server, the registry a Docker Hub login goes to, the label that finds the
preflight, a fleet's outputs, the engine asked for the outgoing server's processes. Expected values
come from the provider's published schema and source, Docker's defaults and the docs, never from
the components."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

import components.docker.server_processes as server_processes
from tests.conftest import shipped_stack
from tests.contracts.provider_schema import load_docker_schema
from tests.fleet.fleet_stacks import IDS, fleet_config
from tests.paths import ROOT
from tests.pulumi_harness import ProgramRun, as_manifest

CONTAINER = "docker:index/container:Container"
PASSWORD = "SENTINEL-registry-pw-names-0001"
# terraform-provider-docker v4.5.0 (the one pulumi-docker bundles), resource_docker_container_funcs.go
# `resourceDockerContainerUpdate`: an update applies the restart policy and the resource limits,
# and starts a container whose `must_run` is true again; nothing else.
APPLIED_BY_UPDATE = {"restart", "maxRetryCount", "memory", "memorySwap", "memoryReservation", "cpuShares",
                     "cpuSet", "cpuPeriod", "cpuQuota"}
# Inputs that only steer the provider's own create or destroy, never the container Docker runs.
PROVIDER_ONLY = {"attach", "logs", "rm", "start", "containerReadRefreshTimeoutMilliseconds", "removeVolumes"}


def _run(program: Any, config: dict[str, Any], stack: str = "v100") -> ProgramRun:
    run: ProgramRun = program(config, stack=stack, secrets={"registryPassword": PASSWORD})
    return run


def _server(run: ProgramRun) -> Any:
    return next(r for r in run.resources if r.type == CONTAINER and not r.inputs.get("attach"))


@pytest.mark.parametrize("stack", ["v100", "a100"])
def test_every_server_input_the_provider_would_not_apply_replaces_the_server(program: Any, stack: str) -> None:
    """A changed input that neither forces a replacement (the schema's willReplaceOnChanges, the
    bridge's ForceNew) nor is applied by the provider's update is dropped silently: a new start
    period or wait timeout would never take effect. Each must be a replaceOnChanges path, and so must
    the engine's init-error key (pulumi pkg/resource/deploy/step_generator.go `initErrorSpecialKey`):
    a server that failed its health wait is replaced by the next `pulumi up`."""
    schema = load_docker_schema().resource(CONTAINER).properties
    server = _server(_run(program, shipped_stack(stack), stack))
    silent = {name for name in server.inputs if not schema[name].get("willReplaceOnChanges")}
    silent -= APPLIED_BY_UPDATE | PROVIDER_ONLY
    assert silent == {"healthcheck", "wait", "waitTimeout", "destroyGraceSeconds", "mustRun"}
    assert set(server.replace_on_changes) == silent | {"#initerror"}
    # daemon.json's log options, merged in by dockerd and read back, must not replace the server
    assert server.ignore_changes == ("logOpts",)


def test_a_docker_hub_login_goes_to_the_hubs_registry(program: Any) -> None:
    """An image without `image.registry` is pulled from Docker Hub, whose registry host is
    registry-1.docker.io (the address terraform-provider-docker's docs give its registry_auth for
    the Hub; docker/cli `registry.DefaultV2Registry`)."""
    config = shipped_stack("v100")
    config["vllm-serving:image"] = {k: v for k, v in config["vllm-serving:image"].items() if k != "registry"}
    provider = _run(program, config).one("providers:docker")
    auth = json.loads(as_manifest(provider.raw["registryAuth"]))
    assert [a["address"] for a in auth] == ["registry-1.docker.io"]


def test_the_preflight_is_found_by_its_label(program: Any) -> None:
    """docs/provider-behaviour.md: `docker ps -a --filter label=vllm-serving.role=preflight`."""
    (preflight,) = _run(program, shipped_stack("v100")).one_shot()
    labels = {label["label"]: label["value"] for label in preflight.inputs["labels"]}
    assert labels == {"vllm-serving.role": "preflight", "vllm-serving.stack": "v100"}
    assert "label=vllm-serving.role=preflight" in (ROOT / "docs" / "provider-behaviour.md").read_text()


def test_a_fleets_outputs_per_host_are_the_documented_ones(program: Any) -> None:
    """docs/kubernetes.md, Docker fleet: `hosts` (per host id: baseUrl, healthUrl, modelsUrl,
    metricsUrl, containerName, logsCommand, imageDigest, dockerRunCommand) and `endpoints`."""
    out = program(fleet_config(), stack="fleet").outputs
    documented = ["baseUrl", "healthUrl", "modelsUrl", "metricsUrl", "containerName", "logsCommand",
                  "imageDigest", "dockerRunCommand"]
    assert list(out["hosts"]) == list(IDS)
    for host_id in IDS:
        assert sorted(out["hosts"][host_id]) == sorted(documented), host_id
        assert out["hosts"][host_id]["modelsUrl"] == f"{out['hosts'][host_id]['baseUrl']}/models"
    assert out["endpoints"] == [out["hosts"][h]["baseUrl"] for h in IDS]
    assert out["imageDigest"] == out["hosts"][IDS[0]]["imageDigest"]


def test_with_no_docker_host_anywhere_dockers_own_socket_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Docker's default engine, with neither the stack's target.dockerHost nor DOCKER_HOST:
    unix:///var/run/docker.sock (docker/cli `client.DefaultDockerHost`)."""
    sockets: list[str | None] = []

    def transport(uds: str | None = None, **_: object) -> httpx.BaseTransport:
        sockets.append(uds)
        return httpx.MockTransport(lambda request: httpx.Response(404, json={"message": "No such container"}))

    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.setattr(server_processes.httpx, "HTTPTransport", transport)
    assert server_processes.server_pids(None, (), "vllm-v100") == frozenset()
    assert sockets == ["/var/run/docker.sock"]


def test_an_ipv6_ssh_host_is_reached_by_its_address(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """ssh://[fe80::1]:2222 (Docker's ssh host syntax): `ssh -p 2222 -- fe80::1 docker top NAME`."""
    argv = tmp_path / "argv"
    ssh = tmp_path / "ssh"
    ssh.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {argv}\nprintf 'UID PID CMD\\nroot 77 vllm\\n'\n")
    ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert server_processes.server_pids("ssh://[fe80::1]:2222", (), "vllm-v100") == frozenset({77})
    assert argv.read_text().split("\n")[:-1] == ["-o", "BatchMode=yes", "-p", "2222", "--", "fe80::1",
                                                 "docker", "top", "vllm-v100"]
    assert "no ssh://" in str(server_processes.server_pids("ssh://", (), "vllm-v100"))
