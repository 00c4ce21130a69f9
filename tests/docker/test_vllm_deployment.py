"""Each shipped stack through the real program under Pulumi's mock engine."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from tests.conftest import shipped_stack
from tests.paths import stack_file
from tests.pulumi_harness import as_manifest, plain_text, secret_paths
from vllm_serving.spec import resolve
from vllm_serving.stack_files.loader import load_settings, read_stack_file
from vllm_serving.views.plan import planned_docker_resources

PASSWORD = "SENTINEL-registry-pw-7f3a"
STACKS = ["v100", "a100"]


def _run(program: Any, stack: str, **secrets: str) -> Any:
    return program(shipped_stack(stack), stack=stack,
                   secrets={"registryPassword": PASSWORD, **secrets})


def test_shm_size_is_in_megabytes(program) -> None:
    # the seed says 32gb; the provider's shm_size is MB
    assert _run(program, "a100").one("Container").inputs["shmSize"] == 32768


def test_shm_size_is_dropped_with_host_ipc(program) -> None:
    # Docker ignores --shm-size with --ipc=host (the host's /dev/shm is used), as the seed's 128g was
    config = shipped_stack("v100")
    config["vllm-serving:container"]["shmSize"] = "128g"
    run = program(config, stack="v100", secrets={"registryPassword": PASSWORD})
    assert "shmSize" not in run.one("Container").inputs
    assert any("shmSize" in w and "no effect" in w for w in run.warnings)


@pytest.mark.parametrize("stack", STACKS)
def test_weights_read_only_and_cache_writable(program, stack: str) -> None:
    volumes = _run(program, stack).one("Container").inputs["volumes"]
    spec = resolve(load_settings(read_stack_file(stack_file(stack))), stack)
    by_path = {v["containerPath"]: v for v in volumes}
    assert by_path[spec.settings.model.mount_path]["readOnly"] is True
    assert by_path["/root/.cache/vllm"].get("readOnly", False) is False


@pytest.mark.parametrize(("stack", "served"), [("v100", "qwen3.5-27b"), ("a100", "/Qwen3.6-27B-FP8")])
def test_outputs_say_what_was_deployed(program, stack: str, served: str) -> None:
    run = _run(program, stack)
    out = run.outputs
    container = run.one("Container").inputs
    port = int(container["ports"][0]["external"])
    assert out["baseUrl"] == f"http://localhost:{port}/v1"
    assert out["healthUrl"] == f"http://localhost:{port}/health"
    assert out["modelsUrl"] == f"http://localhost:{port}/v1/models"
    assert out["metricsUrl"] == f"http://localhost:{port}/metrics"
    assert out["vllmArgs"] == container["command"]
    assert out["servedModelName"] == served
    assert out["imageDigest"].endswith("@sha256:" + "ab" * 32)  # the mock provider's digest
    assert container["image"] == "sha256:" + "cd" * 32  # the pulled image's id, not a moving tag
    # the docker run text carries the same argv as the container
    words = shlex.split(out["dockerRunCommand"].replace("\\\n", " "))
    image_ref = run.one("RemoteImage").inputs["name"]
    assert words[words.index(image_ref) + 1:] == container["command"]


@pytest.mark.parametrize("stack", STACKS)
def test_registers_exactly_the_planned_resources(program, stack: str) -> None:
    run = _run(program, stack)
    spec = resolve(load_settings(read_stack_file(stack_file(stack))), stack)
    assert sorted((r.type, r.name) for r in run.resources) == sorted(planned_docker_resources(spec))


def test_registry_password_never_in_plain_text(program) -> None:
    run = _run(program, "v100", apiKey="SENTINEL-api-key-9c1d")
    for resource in run.resources:
        text = plain_text(resource.raw)
        assert PASSWORD not in text, f"password in plain text in {resource.type} {resource.name}"
        assert "SENTINEL-api-key-9c1d" not in text, f"API key in plain text in {resource.name}"
    provider = run.one("providers:docker")
    assert list(secret_paths(provider.raw["registryAuth"])), "registry auth must be secret"
    assert list(secret_paths(run.one("Container").raw["envs"])), "envs with the API key must be secret"
    for name, value in run.outputs.items():
        if name not in run.secret_outputs:
            assert PASSWORD not in json.dumps(value) and "SENTINEL-api-key-9c1d" not in json.dumps(value)
    assert "VLLM_API_KEY=********" in run.outputs["dockerRunCommand"]


def test_api_key_reaches_the_container_as_secret_env(program) -> None:
    run = _run(program, "v100", apiKey="SENTINEL-api-key-9c1d")
    envs = run.one("Container").inputs["envs"]
    assert envs["value"] == ["VLLM_USE_MODELSCOPE=false", "VLLM_API_KEY=SENTINEL-api-key-9c1d"]


def test_container_replacement_and_waiting(program) -> None:
    run = _run(program, "v100")
    container = run.one("Container")
    assert container.delete_before_replace  # fixed name and host port
    spec = resolve(load_settings(read_stack_file(stack_file("v100"))), "v100")
    assert container.inputs["wait"] is True
    wait = int(container.inputs["waitTimeout"])
    assert wait > spec.startup_seconds
    create_minutes = int(container.custom_timeouts["create"].removesuffix("m"))
    assert create_minutes * 60 >= wait  # Pulumi must not give up before Docker does
    health = container.inputs["healthcheck"]
    assert health["tests"] == ["CMD", "curl", "-fsS", "http://localhost:8000/health"]
    assert health["startPeriod"] == "18m0s"  # Go's canonical form, no perpetual diff
    # after the start period, unhealthy after 3 failed probes 30 s apart, each given 10 s
    # (docs/provider-behaviour.md): the provider's strings, as `docker inspect` shows them back
    assert (health["interval"], health["timeout"], health["retries"]) == ("30s", "10s", 3)
    assert container.inputs["restart"] == "unless-stopped"
    assert container.inputs["logOpts"] == {"max-file": "3", "max-size": "100m"}


def test_image_is_kept_on_the_host(program) -> None:
    image = _run(program, "v100").one("RemoteImage")
    assert image.inputs["keepLocally"] is True
    assert image.inputs["name"] == "192.168.122.156:30000/vllm/vllm-openai:v0.19.1"


def test_named_volumes_survive_destroy(program) -> None:
    run = _run(program, "a100")
    cache = run.one("index/volume:Volume")
    assert cache.inputs["name"] == "vllm-cache"
    assert cache.retain_on_delete


def test_named_model_volume_is_retained_and_protected_on_request(program) -> None:
    config = shipped_stack("a100")
    config["vllm-serving:model"] = {**config["vllm-serving:model"], "hostPath": None,
                                    "volumeName": "qwen-weights", "protect": True}
    config["vllm-serving:model"] = {k: v for k, v in config["vllm-serving:model"].items() if v is not None}
    run = program(config, stack="a100")
    weights = next(r for r in run.of_type("index/volume:Volume") if r.inputs["name"] == "qwen-weights")
    assert weights.retain_on_delete and weights.protect
    mount = next(v for v in run.one("Container").inputs["volumes"] if v.get("volumeName") == "qwen-weights")
    assert mount["readOnly"] is True


def test_specific_gpus_go_through_device_requests(program) -> None:
    # the provider CSV-splits gpus="device=6,7,8,9" into Count 9 + DeviceIDs [6], which dockerd refuses
    inputs = _run(program, "a100").one("Container").inputs
    assert "gpus" not in inputs
    assert inputs["deviceRequests"] == [{"driver": "nvidia", "deviceIds": ["6", "7", "8", "9"],
                                         "capabilities": ["gpu"]}]


def test_all_gpus_use_gpus_all(program) -> None:
    inputs = _run(program, "v100").one("Container").inputs
    assert inputs["gpus"] == "all" and "deviceRequests" not in inputs


def test_container_stops_gracefully(program) -> None:
    # without destroyGraceSeconds the provider stops with a 0 s timeout on replace and destroy
    inputs = _run(program, "v100").one("Container").inputs
    assert (inputs["destroyGraceSeconds"], inputs["stopTimeout"], inputs["stopSignal"]) == (60, 60, "SIGTERM")


def test_pull_timeout_sits_on_the_remote_image(program) -> None:
    run = _run(program, "v100")
    image = run.one("RemoteImage")
    # a ~20 GiB CUDA image at 10 MiB/s plus 2 min: 37 min, above the provider's 20-minute default
    assert image.custom_timeouts == {"create": "37m", "update": "37m"}
    config = shipped_stack("v100")
    config["vllm-serving:image"] = {**config["vllm-serving:image"], "pullTimeout": "90m"}
    run = program(config, stack="v100", secrets={"registryPassword": PASSWORD})
    assert run.one("RemoteImage").custom_timeouts["create"] == "90m"


def test_adopted_volumes_carry_no_labels(program) -> None:
    # Docker adopts an existing volume unchanged; labels read back would replace it on every run
    config = shipped_stack("v100")
    config["vllm-serving:cache"] = {"volumeName": "shared-cache"}
    run = program(config, stack="v100", secrets={"registryPassword": PASSWORD})
    for volume in run.of_type("index/volume:Volume"):
        assert "labels" not in volume.inputs and "driverOpts" not in volume.inputs


def test_docker_host_over_ssh(program) -> None:
    config = shipped_stack("v100")
    config["vllm-serving:target"] = {"dockerHost": "ssh://deploy@gpu-v100-01", "sshOpts": ["-o", "Port=2222"]}
    run = program(config, stack="v100", secrets={"registryPassword": PASSWORD})
    provider = run.one("providers:docker")
    assert provider.inputs["host"] == "ssh://deploy@gpu-v100-01"
    # the stack's ssh options reach the provider's ssh (a provider's list input is JSON text on the wire)
    assert json.loads(provider.inputs["sshOpts"]) == ["-o", "Port=2222"]
    assert run.outputs["baseUrl"] == "http://gpu-v100-01:30006/v1"


@pytest.mark.parametrize(("bind", "published"), [(None, "0.0.0.0"), ("127.0.0.1", "127.0.0.1")])
def test_the_port_is_published_on_the_bind_address(program: Any, bind: str | None, published: str) -> None:
    # network.bindAddress 127.0.0.1 keeps the API on the host alone (`-p 127.0.0.1:30006:8000`);
    # unset, Docker publishes on every address
    config = shipped_stack("v100")
    if bind is not None:
        config["vllm-serving:network"] = {**config["vllm-serving:network"], "bindAddress": bind}
    run = program(config, stack="v100", secrets={"registryPassword": PASSWORD})
    assert run.one("Container").inputs["ports"] == [
        {"internal": 8000, "external": 30006, "ip": published, "protocol": "tcp"}]


def test_the_registry_login_is_the_stack_files_user_at_its_registry(program: Any) -> None:
    # `docker login 192.168.122.156:30000 -u admin` (the v100 stack file's image section): the provider
    # pulls with these; a login without the user is refused by the registry
    provider = _run(program, "v100").one("providers:docker")
    # a provider's inputs cross the wire as JSON text (here a secret: it holds the password)
    auth = json.loads(as_manifest(provider.raw["registryAuth"]))
    assert [{k: a[k] for k in ("address", "username", "password")} for a in auth] == [
        {"address": "192.168.122.156:30000", "username": "admin", "password": PASSWORD}]
