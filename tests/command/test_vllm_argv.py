"""vLLM's argv: deterministic, unset flags left out, JSON flags compact."""

from __future__ import annotations

from typing import Any

from vllm_serving.command.vllm_argv import secret_env_names, vllm_args, vllm_env
from vllm_serving.settings.stack_config import parse_stack_config

BASE: dict[str, Any] = {
    "vllm-serving:hardware": {"gpu": "A100-80GB", "count": 2},
    "vllm-serving:image": {"tag": "v0.19.1"},
    "vllm-serving:model": {"name": "Qwen3.5-27B", "hostPath": "/m/qwen"},
}


def _args(**engine: Any) -> tuple[str, ...]:
    return vllm_args(parse_stack_config({**BASE, "vllm-serving:engine": engine}))


def test_unset_flags_are_left_out() -> None:
    assert _args() == ("--model", "/models/qwen")


def test_same_settings_give_byte_identical_argv_whatever_the_key_order() -> None:
    a = {"maxModelLen": 8192, "tensorParallelSize": 2, "env": {"B": "1", "A": "2"}}
    b = {"env": {"A": "2", "B": "1"}, "tensorParallelSize": 2, "maxModelLen": 8192}
    assert _args(**a) == _args(**b)
    env_a = vllm_env(parse_stack_config({**BASE, "vllm-serving:engine": a}))
    assert env_a == (("A", "2"), ("B", "1"))


def test_booleans_and_json() -> None:
    args = _args(enablePrefixCaching=False, trustRemoteCode=False, enableAutoToolChoice=True,
                 toolCallParser="hermes", speculativeConfig={"method": "mtp", "numSpeculativeTokens": 1})
    assert "--no-enable-prefix-caching" in args
    assert "--trust-remote-code" not in args
    assert args[args.index("--speculative-config") + 1] == '{"method":"mtp","num_speculative_tokens":1}'


def test_floats_render_shortest() -> None:
    args = _args(gpuMemoryUtilization=0.9)
    assert args[args.index("--gpu-memory-utilization") + 1] == "0.9"


def test_extra_args_come_last_in_order() -> None:
    assert _args(maxModelLen=4096, extraArgs=["--enforce-eager", "--seed", "7"])[-3:] == (
        "--enforce-eager", "--seed", "7")


def test_secrets_reach_the_container_as_the_variables_vllm_reads() -> None:
    """vLLM reads its API key from VLLM_API_KEY (vllm/envs.py); Hugging Face downloads read HF_TOKEN.
    The names come from the secrets the stack sets, in one fixed order whatever the file's order."""
    def names(*secrets: str) -> tuple[str, ...]:
        values = {**BASE, **{f"vllm-serving:{s}": "[secret]" for s in secrets}}
        return secret_env_names(parse_stack_config(values, {f"vllm-serving:{s}" for s in secrets}))

    assert names() == ()
    assert names("apiKey") == ("VLLM_API_KEY",)
    assert names("hfToken", "apiKey") == names("apiKey", "hfToken") == ("VLLM_API_KEY", "HF_TOKEN")
