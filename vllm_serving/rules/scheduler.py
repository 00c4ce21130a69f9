"""The scheduler's batch limits: tokens per step against sequences, context and the KV block.

vLLM fills the limits a stack leaves unset from per-GPU defaults (engine/arg_utils.py
`EngineArgs._set_default_max_num_seqs_and_batched_tokens_args`), then checks them
(config/scheduler.py `SchedulerConfig.verify_max_model_len`). A hybrid model with prefix
caching runs in "align" mode, whose attention block must fit one step's tokens.
"""

from __future__ import annotations

from vllm_serving.engine import release_facts
from vllm_serving.findings import Severity, config_key
from vllm_serving.planner.memory_budget import PINNED_VLLM_VERSION
from vllm_serving.planner.release_accounting import batch_defaults as release_batch_defaults
from vllm_serving.planner.release_accounting import resolve_release
from vllm_serving.rules.base import KEY, Context, Facts, Rule

TOKENS = config_key("engine", "maxNumBatchedTokens")
SEQS = config_key("engine", "maxNumSeqs")
PERFORMANCE_MODE = "--performance-mode"


def batch_defaults(ctx: Context) -> tuple[int, int]:
    """vLLM's (max_num_batched_tokens, max_num_seqs) for the OpenAI server on this GPU when a
    stack sets neither: the image's release's `EngineArgs.get_batch_defaults` tiers, read per
    release into planner/memory_accounting.json (v0.28 added the >= 160 GiB tier of B200s)."""
    version = ctx.vllm_version or PINNED_VLLM_VERSION
    release, _ = resolve_release(".".join(map(str, version)))
    return release_batch_defaults(release, gpu_total_gib=ctx.gpu.cuda_memory_gib, gpu_name=ctx.gpu.product_label,
                                  usage_context="openai", max_num_batched_tokens=None, max_num_seqs=None)


def max_len(ctx: Context) -> int:
    return ctx.max_model_len


def performance_scale(ctx: Context) -> dict[str, int]:
    """`--performance-mode` in extraArgs: the factor the release multiplies each unset batch
    default by (`throughput` doubles both in v0.19.1); {} for the default mode."""
    modes = release_facts.performance_modes(ctx.release) or {}
    chosen = [v for _, v in ctx.extra_values(PERFORMANCE_MODE)]
    return dict(modes.get(chosen[-1], {})) if chosen else {}


def batch_limits(ctx: Context) -> tuple[int, int]:
    """The (max_num_batched_tokens, max_num_seqs) vLLM runs with: the stack's, else defaults
    (scaled by --performance-mode) clamped as `_set_default_max_num_seqs_and_batched_tokens_args`
    clamps them."""
    default_tokens, default_seqs = batch_defaults(ctx)
    scale = performance_scale(ctx)
    default_tokens *= scale.get("max_num_batched_tokens", 1)
    default_seqs *= scale.get("max_num_seqs", 1)
    seqs = ctx.engine.max_num_seqs or default_seqs
    tokens = ctx.engine.max_num_batched_tokens
    if tokens is None:
        tokens = default_tokens if ctx.chunked_prefill else max(max_len(ctx), default_tokens)
        tokens = min(seqs * max_len(ctx), tokens)
    if ctx.engine.max_num_seqs is None:
        seqs = min(seqs, tokens)
    return tokens, seqs


def _align(ctx: Context) -> bool:
    return ctx.plan.mamba_cache_mode == "align"


def _tokens_below_len(ctx: Context) -> Facts | None:
    tokens = ctx.engine.max_num_batched_tokens
    if tokens is not None and not ctx.chunked_prefill and tokens < max_len(ctx):
        return {"tokens": tokens, "len": max_len(ctx)}
    return None


def _tokens_below_seqs(ctx: Context) -> Facts | None:
    tokens, seqs = batch_limits(ctx)
    if tokens < seqs:
        key = TOKENS if ctx.engine.max_num_batched_tokens is not None else SEQS
        return {KEY: key, "tokens": tokens, "seqs": seqs}
    return None


def _align_block(ctx: Context) -> Facts | None:
    tokens, _ = batch_limits(ctx)
    if _align(ctx) and ctx.plan.block_size > tokens:
        return {"block": ctx.plan.block_size, "tokens": tokens}
    return None


def _align_chunked(ctx: Context) -> Facts | None:
    return {} if _align(ctx) and not ctx.chunked_prefill else None


MAMBA_BLOCK = "--mamba-block-size"


def _mamba_block_without_prefix_caching(ctx: Context) -> Facts | None:
    """`VllmConfig.validate_mamba_block_size`: a --mamba-block-size (other than max_model_len)
    only with prefix caching, which a stack turns off with enablePrefixCaching: false."""
    values = [v for _, v in ctx.extra_values(MAMBA_BLOCK)]
    if not values or not values[-1].strip().isdigit() or ctx.engine.enable_prefix_caching is not False:
        return None
    size = int(values[-1])
    return {"size": size} if size != max_len(ctx) else None


ALIGN_SRC = ("vllm/model_executor/models/config.py MambaModelConfig.verify_and_update_config and "
             "HybridAttentionMambaModelConfig.verify_and_update_config")

RULES: tuple[Rule, ...] = (
    Rule("max-num-batched-tokens-below-max-model-len", Severity.ERROR, TOKENS,
         "maxNumBatchedTokens {tokens} is below maxModelLen {len} and chunked prefill is off",
         "raise engine.maxNumBatchedTokens to {len}, lower engine.maxModelLen, or drop "
         "--no-enable-chunked-prefill from engine.extraArgs",
         "Without chunked prefill a prompt is scheduled whole: one step must hold maxModelLen tokens.",
         "vLLM exits: \"max_num_batched_tokens (N) is smaller than max_model_len (M)\".",
         "vllm/config/scheduler.py SchedulerConfig.verify_max_model_len", _tokens_below_len),
    Rule("max-num-batched-tokens-below-max-num-seqs", Severity.ERROR, TOKENS,
         "maxNumBatchedTokens {tokens} is below maxNumSeqs {seqs}",
         "raise engine.maxNumBatchedTokens to at least {seqs}, or lower engine.maxNumSeqs",
         "Each scheduled sequence needs a token of the step; vLLM's defaults (2048; 8192 on "
         "70 GiB+ GPUs other than A100; 16384 on 160 GiB+ from v0.28) apply to the unset one (keyed on "
         "maxNumSeqs then).",
         "vLLM exits: \"max_num_batched_tokens (N) must be greater than or equal to max_num_seqs (M)\".",
         "vllm/config/scheduler.py SchedulerConfig.verify_max_model_len; vllm/engine/arg_utils.py "
         "EngineArgs.get_batch_defaults", _tokens_below_seqs),
    Rule("hybrid-block-exceeds-batched-tokens", Severity.ERROR, TOKENS,
         "with prefix caching this hybrid model's attention block is {block} tokens, above "
         "maxNumBatchedTokens {tokens}",
         "raise engine.maxNumBatchedTokens to at least {block}, or set engine.enablePrefixCaching: false",
         "Hybrid model with prefix caching (\"align\" mode): the attention block (grown to hold a "
         "linear-attention state) fits one step's tokens.",
         "vLLM fails an assertion after profiling: \"In Mamba cache align mode, block_size (N) must be "
         "<= max_num_batched_tokens (M)\".",
         f"vllm/config/vllm.py VllmConfig.validate_block_size; {ALIGN_SRC}", _align_block),
    Rule("hybrid-prefix-caching-needs-chunked-prefill", Severity.ERROR, config_key("engine", "extraArgs"),
         "prefix caching on a hybrid model runs in align mode, which needs chunked prefill",
         "drop --no-enable-chunked-prefill from engine.extraArgs, or set engine.enablePrefixCaching: false",
         "Hybrid model with prefix caching and --no-enable-chunked-prefill.",
         "vLLM fails an assertion at startup: \"Chunked prefill is required for mamba cache mode 'align'\".",
         ALIGN_SRC, _align_chunked),
    Rule("mamba-block-size-needs-prefix-caching", Severity.ERROR, config_key("engine", "enablePrefixCaching"),
         "--mamba-block-size {size} in engine.extraArgs takes effect only with prefix caching, which this stack "
         "turns off",
         "remove --mamba-block-size from engine.extraArgs, or set engine.enablePrefixCaching: true",
         "--mamba-block-size with engine.enablePrefixCaching: false.",
         "vLLM exits while building its config: \"--mamba-block-size can only be set with "
         "--enable-prefix-caching\".",
         "vllm/config/vllm.py VllmConfig.validate_mamba_block_size", _mamba_block_without_prefix_caching),
)
