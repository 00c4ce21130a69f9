"""A wrong config stops the program with the key and the fix, before any resource is registered."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pulumi
import pytest

from tests.conftest import shipped_stack
from tests.pulumi_harness import ProgramFailed, stack_config


def _with(stack: str, section: str, **changes: Any) -> dict[str, Any]:
    config = copy.deepcopy(shipped_stack(stack))
    key = f"vllm-serving:{section}"
    config[key] = {**config.get(key, {}), **changes}
    return config


CASES = [
    # (config, expected key, words of the fix)
    (_with("v100", "engine", maxModelLen="8k"), "vllm-serving:engine.maxModelLen", "whole number"),
    (_with("v100", "engine", maxModelLenn=8192), "vllm-serving:engine.maxModelLenn", "did you mean 'maxModelLen'"),
    (_with("v100", "engine", gpuMemoryUtilization=1.5), "vllm-serving:engine.gpuMemoryUtilization", "at most 1"),
    (_with("v100", "hardware", deviceIds=[8]), "vllm-serving:hardware.deviceIds", "hardware.count"),
    (_with("v100", "hardware", gpu="V100-64GB"), "vllm-serving:hardware.gpu", "V100-"),
    (_with("v100", "image", tag=None), "vllm-serving:image.tag", "v0.19.1"),
    (_with("v100", "network", hostPort=70000), "vllm-serving:network.hostPort", "at most 65535"),
    (_with("v100", "engine", env={"VLLM_API_KEY": "abc"}), "vllm-serving:engine.env", "--secret apiKey"),
    (_with("v100", "engine", extraArgs=["--max-model-len", "4096"]), "vllm-serving:engine.extraArgs",
     "engine.maxModelLen"),
    (_with("a100", "model", name="Qwen3.6-72B"), "vllm-serving:model.name", "model.architecture"),
]


@pytest.mark.parametrize(("config", "key", "fix"), CASES, ids=[c[1] for c in CASES])
def test_bad_config_fails_before_any_resource(program, config, key: str, fix: str) -> None:
    with pytest.raises(ProgramFailed) as failed:
        program(config, stack="bad", secrets={"registryPassword": "pw"})
    assert isinstance(failed.value.error, pulumi.RunError)
    assert key in str(failed.value)
    assert fix in str(failed.value)
    assert failed.value.resources == []


def test_missing_registry_password_is_an_error(program) -> None:
    with pytest.raises(ProgramFailed) as failed:
        program(shipped_stack("v100"), stack="v100")
    assert "vllm-serving:registryPassword" in str(failed.value)
    assert "pulumi config set --secret registryPassword" in str(failed.value)
    assert failed.value.resources == []


def test_password_in_plain_config_is_refused(program) -> None:
    config = {**shipped_stack("v100"), "vllm-serving:registryPassword": "hunter2"}
    with pytest.raises(ProgramFailed) as failed:
        program(config, stack="v100")
    assert "--secret registryPassword" in str(failed.value)
    assert "hunter2" not in str(failed.value)
    assert failed.value.resources == []


INVALID_STACKS = Path(__file__).resolve().parent / "stacks" / "invalid"
REFUSED = {
    # what each fixture's header says is wrong: the key to change and what the fix must say
    "tp3": ("engine.tensorParallelSize", "1, 2, 4, 8"),  # divide 4 KV heads, or 8: a multiple of them
    "v100-bf16": ("engine.dtype", "half"),  # V100 is CC 7.0: no bfloat16
    "v100-fp8-kv": ("engine.kvCacheDtype", "remove engine.kvCacheDtype"),  # no backend reads FP8 KV on CC 7.0
    "weights-dont-fit": ("engine.gpuMemoryUtilization", "raise engine.tensorParallelSize"),  # ~50 GiB on 32 GB
}


@pytest.mark.parametrize("path", sorted(INVALID_STACKS.glob("*.yaml")), ids=lambda p: p.stem)
def test_incompatible_stack_fails_preview_with_the_fix(program, path: Path) -> None:
    """bf16 on V100, FP8 KV on V100, TP 3, weights that do not fit: refused at `pulumi preview`."""
    key, fix = REFUSED[path.stem]
    with pytest.raises(ProgramFailed) as failed:
        program(stack_config(path), stack=path.stem, secrets={"registryPassword": "pw"}, preview=True)
    assert failed.value.resources == []
    assert f"vllm-serving:{key}" in str(failed.value) and fix in str(failed.value)


def test_capacity_is_a_stack_output(program) -> None:
    run = program(shipped_stack("v100"), stack="v100", secrets={"registryPassword": "pw"})
    capacity = run.outputs["capacity"]
    assert capacity["kv_bytes_per_token_per_gpu"] == 2 * 16 * 1 * 256 * 2  # facts: 16 KiB/token/GPU at TP 8
    assert capacity["fits_one_request"] is True and capacity["max_concurrency"] >= 1


def test_a_misspelt_namespace_stops_the_program_naming_the_key(program) -> None:
    # Pulumi hands `vllm-servng:engine` to no program: read as written, its settings would vanish
    config = {**shipped_stack("v100"), "vllm-servng:engine": {"dtype": "bfloat16"}}
    with pytest.raises(ProgramFailed) as failed:
        program(config, stack="v100", secrets={"registryPassword": "pw"})
    assert "vllm-servng:engine" in str(failed.value)
    assert "rename the key to vllm-serving:engine" in str(failed.value)
    assert failed.value.resources == []


def test_another_programs_namespace_is_not_read(program) -> None:
    # a provider's own key beside ours (docker:host) is Pulumi's to pass on, not a setting of this stack
    run = program({**shipped_stack("v100"), "docker:host": "unix:///var/run/docker.sock"}, stack="v100",
                  secrets={"registryPassword": "pw"})
    assert run.outputs["containerName"] == shipped_stack("v100")["vllm-serving:container"]["name"]


def test_a_short_api_key_stops_the_program_without_showing_it(program) -> None:
    # the value is read only under Pulumi (offline it stays encrypted): 9 characters, under the 16 asked
    with pytest.raises(ProgramFailed) as failed:
        program(shipped_stack("v100"), stack="v100", secrets={"registryPassword": "pw", "apiKey": "sk-abc123"})
    assert "vllm-serving:apiKey" in str(failed.value) and "shorter than 16 characters" in str(failed.value)
    assert "sk-abc123" not in str(failed.value)
    assert failed.value.resources == []
