"""vLLM's command line from the settings: one flag table, rendered in a fixed order.

Same settings, byte-identical argv: a reordered flag would show as a diff in every preview.
Flags whose setting is unset are left out, so vLLM's own default applies.
The official image's entrypoint takes `--model PATH` both as `vllm serve` and as the older
`python3 -m vllm.entrypoints.openai.api_server`, so we never prepend `serve`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from .settings import StackSettings

# Secret config key -> the container env var that carries it.
SECRET_ENV: dict[str, str] = {"apiKey": "VLLM_API_KEY", "hfToken": "HF_TOKEN"}

Value = str | int | float | bool | None


@dataclass(frozen=True)
class Flag:
    """One vLLM flag and the config key that sets it."""

    flag: str
    key: str
    value: Callable[[StackSettings], Value]


def _speculative(s: StackSettings) -> str | None:
    spec = s.engine.speculative_config
    if spec is None:
        return None
    # snake_case keys in a fixed order, compact, as vLLM's docs write it
    return json.dumps(spec.model_dump(exclude_none=True), separators=(",", ":"))


def _prefix_caching(s: StackSettings) -> Value:
    return s.engine.enable_prefix_caching


# Order follows seed 000's hand-typed command; new flags slot in beside their relatives.
FLAGS: tuple[Flag, ...] = (
    Flag("--model", "model.containerPath", lambda s: s.model.mount_path),
    Flag("--served-model-name", "model.servedName", lambda s: s.model.served_name),
    Flag("--tensor-parallel-size", "engine.tensorParallelSize", lambda s: s.engine.tensor_parallel_size),
    Flag("--pipeline-parallel-size", "engine.pipelineParallelSize", lambda s: s.engine.pipeline_parallel_size),
    Flag("--gpu-memory-utilization", "engine.gpuMemoryUtilization", lambda s: s.engine.gpu_memory_utilization),
    Flag("--max-model-len", "engine.maxModelLen", lambda s: s.engine.max_model_len),
    Flag("--dtype", "engine.dtype", lambda s: s.engine.dtype),
    Flag("--kv-cache-dtype", "engine.kvCacheDtype", lambda s: s.engine.kv_cache_dtype),
    Flag("--quantization", "engine.quantization", lambda s: s.engine.quantization),
    Flag("--attention-backend", "engine.attentionBackend", lambda s: s.engine.attention_backend),
    Flag("--trust-remote-code", "engine.trustRemoteCode", lambda s: s.engine.trust_remote_code or None),
    Flag("--reasoning-parser", "engine.reasoningParser", lambda s: s.engine.reasoning_parser),
    Flag("--enable-prefix-caching", "engine.enablePrefixCaching", _prefix_caching),
    Flag("--enable-auto-tool-choice", "engine.enableAutoToolChoice", lambda s: s.engine.enable_auto_tool_choice or None),
    Flag("--tool-call-parser", "engine.toolCallParser", lambda s: s.engine.tool_call_parser),
    Flag("--speculative-config", "engine.speculativeConfig", _speculative),
    Flag("--max-num-seqs", "engine.maxNumSeqs", lambda s: s.engine.max_num_seqs),
    Flag("--max-num-batched-tokens", "engine.maxNumBatchedTokens", lambda s: s.engine.max_num_batched_tokens),
)

# Flags a user might try to pass through extraArgs -> the key that owns them.
MODELLED_FLAGS: dict[str, str] = {f.flag: f.key for f in FLAGS} | {
    "--no-enable-prefix-caching": "engine.enablePrefixCaching",
    "--api-key": "the secret apiKey (pulumi config set --secret apiKey)",
    "--port": "network.hostPort (the container port stays 8000)",
    "--host": "network.bindAddress",
}


def _text(value: str | int | float) -> str:
    # repr gives the shortest text that round-trips a float: 0.8, not 0.8000000000000000444
    return repr(value) if isinstance(value, float) else str(value)


def render_flags(settings: StackSettings, flags: tuple[Flag, ...]) -> list[str]:
    """`flags` rendered for `settings`, in the table's order; unset ones left out."""
    args: list[str] = []
    for flag in flags:
        value = flag.value(settings)
        if value is None:
            continue
        if value is True:
            args.append(flag.flag)
        elif value is False:  # only boolean flags with a --no- form reach here
            args.append("--no-" + flag.flag.removeprefix("--"))
        else:
            args += [flag.flag, _text(value)]
    return args


def vllm_args(settings: StackSettings) -> tuple[str, ...]:
    """The argv after the image's entrypoint."""
    return (*render_flags(settings, FLAGS), *settings.engine.extra_args)


def vllm_env(settings: StackSettings) -> tuple[tuple[str, str], ...]:
    """Plain (non-secret) environment, sorted by name."""
    return tuple(sorted(settings.engine.env.items()))


def secret_env_names(settings: StackSettings) -> tuple[str, ...]:
    """Env vars whose values come from Pulumi secrets, in a fixed order."""
    return tuple(SECRET_ENV[key] for key in SECRET_ENV if key in settings.secrets_set)
