"""The vLLM flags this project models: one row per flag, the only place a new flag is added.

A row names the flag, the config key that sets it and how its value is written; the argv
renderer (`vllm_serving.command.vllm_argv`), the extraArgs checks (`engine.extra_args`) and the
release's carried flags (`release.carried`) all read this table.
"""

from __future__ import annotations

from typing import Literal

import msgspec

# Secret config key -> the container env var that carries it.
SECRET_ENV: dict[str, str] = {"apiKey": "VLLM_API_KEY", "hfToken": "HF_TOKEN"}

FlagForm = Literal["value", "switch", "negatable", "json"]
"""value: `--flag VALUE`; switch: `--flag` when true, nothing otherwise; negatable: `--flag` or
`--no-flag`, nothing when unset; json: the section as compact JSON."""


class Flag(msgspec.Struct, frozen=True):
    """One vLLM flag and the config key that sets it."""

    flag: str
    key: str
    """Config key, `section.camelCaseName`."""
    form: FlagForm = "value"
    attribute: str | None = None
    """Settings attribute path when it is not the key in snake_case (a derived value)."""


# Order follows seed 000's hand-typed command; new flags slot in beside their relatives.
FLAGS: tuple[Flag, ...] = (
    Flag("--model", "model.containerPath", attribute="model.mount_path"),
    Flag("--served-model-name", "model.servedName"),
    Flag("--tensor-parallel-size", "engine.tensorParallelSize"),
    Flag("--pipeline-parallel-size", "engine.pipelineParallelSize"),
    Flag("--data-parallel-size", "engine.dataParallelSize"),
    Flag("--gpu-memory-utilization", "engine.gpuMemoryUtilization"),
    Flag("--max-model-len", "engine.maxModelLen"),
    Flag("--dtype", "engine.dtype"),
    Flag("--kv-cache-dtype", "engine.kvCacheDtype"),
    Flag("--quantization", "engine.quantization"),
    Flag("--attention-backend", "engine.attentionBackend"),
    Flag("--trust-remote-code", "engine.trustRemoteCode", "switch"),
    Flag("--reasoning-parser", "engine.reasoningParser"),
    Flag("--enable-prefix-caching", "engine.enablePrefixCaching", "negatable"),
    Flag("--enable-auto-tool-choice", "engine.enableAutoToolChoice", "switch"),
    Flag("--tool-call-parser", "engine.toolCallParser"),
    Flag("--speculative-config", "engine.speculativeConfig", "json"),
    Flag("--max-num-seqs", "engine.maxNumSeqs"),
    Flag("--max-num-batched-tokens", "engine.maxNumBatchedTokens"),
)

# Flags a user might try to pass through extraArgs -> the key that owns them.
MODELLED_FLAGS: dict[str, str] = {f.flag: f.key for f in FLAGS} | {
    "--no-enable-prefix-caching": "engine.enablePrefixCaching",
    "--api-key": "the secret apiKey (pulumi config set --secret apiKey)",
    "--port": "network.hostPort (the container port stays 8000)",
    "--host": "network.bindAddress",
}
