"""The `local` stack: vLLM's CPU image on a laptop without a GPU, checked, rendered and deployed
(under mocks) with no GPU request anywhere, its KV cache sized from VLLM_CPU_KVCACHE_SPACE."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.kubernetes.cluster_version import KUBERNETES_VERSION
from tests.paths import PROJECT_DIR, stack_file
from tests.pulumi_harness import run_program, stack_config
from tests.stack_builders import PROJECT, make_spec, stack_values
from vllm_serving.cli import main
from vllm_serving.findings import ConfigError
from vllm_serving.planner.capacity import CapacityPlan, plan_capacity
from vllm_serving.render.kubernetes.objects import kubernetes_objects
from vllm_serving.rules import check
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.stack_files.loader import load_spec

LOCAL = stack_file("local")
# What asks Docker, Compose or Kubernetes for a GPU, or for the NVIDIA runtime that exposes one.
GPU_WORDS: dict[str, tuple[str, ...]] = {
    "docker-run": ("--gpus", "--runtime"),
    "compose": ("devices", "driver: nvidia", "runtime"),
    "k8s": ("nvidia", "--gpus"),
}


def _cli(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--project-dir", str(PROJECT_DIR), *argv])
    assert code == 0, err.getvalue()
    return out.getvalue()


def _settings_only(value: Any) -> Any:
    """A manifest less its multi-line texts: a script may name GPUs without asking for one."""
    if isinstance(value, dict):
        return {k: _settings_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_settings_only(v) for v in value]
    return None if isinstance(value, str) and "\n" in value else value


def _rendered(stack: str, fmt: str) -> str:
    text = _cli("render", stack, "--format", fmt)
    if fmt != "k8s":
        return text
    return yaml.safe_dump_all([_settings_only(o) for o in yaml.safe_load_all(text) if o])


def test_local_checks_clean() -> None:
    spec = load_spec(LOCAL, "local", PROJECT_DIR)
    assert check(spec) == []
    assert spec.settings.hardware.device == "cpu" and spec.gpu.name == "CPU"
    assert spec.settings.image.repository == "vllm/vllm-openai-cpu"
    assert spec.settings.network.bind_address == "127.0.0.1"
    assert spec.endpoints()["baseUrl"] == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize("fmt", sorted(GPU_WORDS))
def test_no_format_asks_for_a_gpu(fmt: str) -> None:
    rendered = _rendered("local", fmt)
    assert "vllm/vllm-openai-cpu:v0.19.1" in rendered
    assert [word for word in GPU_WORDS[fmt] if word in rendered] == []


@pytest.mark.parametrize("fmt", sorted(GPU_WORDS))
def test_a_gpu_stack_renders_those_words(fmt: str) -> None:
    """What the check above looks for is what a GPU stack's render holds: it can fail."""
    rendered = _rendered("v100", fmt)
    assert [word for word in GPU_WORDS[fmt] if word in rendered] != []


def test_compose_service_reserves_no_device() -> None:
    service = yaml.safe_load(_cli("render", "local", "--format", "compose"))["services"]["vllm-local"]
    assert "deploy" not in service and "runtime" not in service
    assert service["environment"] == {"VLLM_CPU_KVCACHE_SPACE": "4"}


def test_a_cpu_pod_asks_for_no_gpu_node_and_validates() -> None:
    spec = make_spec("local", target={"kind": "kubernetes"})
    objects = kubernetes_objects(spec)
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    assert "nodeSelector" not in pod and "tolerations" not in pod and "runtimeClassName" not in pod
    assert "nvidia.com/gpu" not in str(pod["containers"][0].get("resources"))
    for obj in objects:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)  # raises on error


def test_registers_with_no_device_request_and_no_registry_login() -> None:
    run = run_program(stack_config(LOCAL), stack="local")
    containers = [r for r in run.resources if r.type == "docker:index/container:Container"]
    assert containers, [r.type for r in run.resources]
    for container in containers:
        assert not {"gpus", "deviceRequests", "runtime"} & set(container.inputs), container.name
    [provider] = [r for r in run.resources if r.type == "pulumi:providers:docker"]
    assert "registryAuth" not in provider.inputs
    assert run.one("RemoteImage").inputs["name"] == "vllm/vllm-openai-cpu:v0.19.1"
    assert run.outputs["capacity"]["available_kv_gib"] == 4.0


def _kv(space: str) -> CapacityPlan:
    return plan_capacity(make_spec("local", engine={"env": {"VLLM_CPU_KVCACHE_SPACE": space}}))


# Qwen3-0.6B in bfloat16: 28 layers x K and V x 8 KV heads x head_dim 128 x 2 bytes per token
TOKEN_BYTES = 28 * 2 * 8 * 128 * 2
CPU_BLOCK = 128  # vllm/platforms/cpu.py: the CPU backend's block size


@pytest.mark.parametrize("gib", [1, 4, 8])
def test_the_kv_cache_is_the_setting_not_a_memory_estimate(gib: int) -> None:
    plan = _kv(str(gib))
    assert plan.available_kv_gib == gib and plan.block_size == CPU_BLOCK
    assert plan.kv_bytes_per_token_per_gpu == TOKEN_BYTES
    assert plan.kv_cache_tokens == gib * 2**30 // (CPU_BLOCK * TOKEN_BYTES) * CPU_BLOCK


def test_the_shipped_cache_holds_nine_requests() -> None:
    assert int(_kv("4").max_concurrency) == 9  # as Pulumi.local.yaml's comment says


@pytest.mark.parametrize(("hardware", "key", "says"), [
    ({"device": "cpu", "gpu": "V100-32GB"}, "hardware.gpu", "remove hardware.gpu"),
    ({"gpu": "CPU", "count": 1}, "hardware.device", "set hardware.device: cpu"),
    ({"device": "cpu", "deviceIds": [0]}, "hardware.deviceIds", "remove hardware.deviceIds"),
])
def test_the_device_and_the_gpu_keys_must_agree(hardware: dict[str, Any], key: str, says: str) -> None:
    values = {**stack_values("local"), f"{PROJECT}:hardware": hardware}
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values)
    [finding] = caught.value.findings
    assert finding.key == f"{PROJECT}:{key}" and says in finding.fix


def test_device_cpu_alone_is_a_whole_hardware_section() -> None:
    hardware = parse_stack_config({**stack_values("local"), f"{PROJECT}:hardware": {"device": "cpu"}}).hardware
    assert (hardware.gpu, hardware.count, hardware.uses_gpus) == ("CPU", 1, False)
