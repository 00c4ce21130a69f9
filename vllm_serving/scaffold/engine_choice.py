"""The engine section of a new stack, chosen from the GPU, the model and the capacity planner.

- tensorParallelSize and dataParallelSize: the TP sizes that serve are the powers of two up to
  the host's GPUs that the parallelism rules accept (attention, KV and linear-attention heads
  split evenly) and at which the weights and one request of MIN_USEFUL_CONTEXT tokens (or the
  asked maxModelLen) fit. When one such TP leaves room - a KV cache at least as large as the
  weights on each GPU - the smallest of them runs, with as many engines (data parallelism) as
  the GPUs allow: a small model on several GPUs gets independent copies, not a TP all-reduce
  over PCIe on every layer. Otherwise the largest TP that serves, one engine. `--tp`/`--dp`
  pick their own, checked the same way;
- dtype: what vLLM computes in on this GPU: the checkpoint's (bfloat16) from CC 8.0, half below;
  float32 for a model vLLM refuses in float16 on a GPU without bfloat16 (what `auto` picks there);
- maxModelLen: the longest request whose KV cache fits beside the weights (the planner), rounded
  down to whole K (1024 tokens), at most the model's max_position_embeddings;
- parsers: the reasoning and tool-call parsers for the model type, if the release has them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.engine.release_registry import release_for_tag
from vllm_serving.planner.capacity import (
    DEFAULT_GPU_MEMORY_UTILIZATION,
    PINNED_VLLM_VERSION,
    CapacityInputs,
    CapacityPlan,
    compute_dtype,
    parse_vllm_version,
    plan,
)
from vllm_serving.rules import RULES_BY_CODE
from vllm_serving.rules.base import Context
from vllm_serving.settings import StackSettings
from vllm_serving.spec import resolve

PINNED_TAG = "v" + ".".join(map(str, PINNED_VLLM_VERSION))
"""The release a new stack runs: the one the planner's arithmetic and the rules are written for."""
MAX_GPUS = 64
"""Largest TP the settings accept: how far `gpus_needed` looks."""
MIN_USEFUL_CONTEXT = 4096
"""Below this a chat turn with a system prompt and tool definitions hardly fits: a GPU count
whose longest request is shorter counts as too few."""
CONTEXT_STEP = 1024
"""maxModelLen is rounded down to whole K tokens: 235520 reads as 230K."""
# The rules that decide which TP sizes split the model (vllm_serving/rules/parallelism.py).
HEAD_RULES = ("tp-heads-indivisible", "tp-kv-heads-indivisible", "tp-linear-heads-indivisible")

# Hugging Face model_type -> (reasoning parser, tool-call parser), as vLLM's docs and recipes
# serve them: Qwen2.5/Qwen3 chat templates emit Hermes-style tool calls (docs/features/
# tool_calling.md, "Qwen Models"); Qwen3.5/3.6 emit Qwen3-Coder XML (the Qwen3.5 recipe, seed 000);
# Llama 3.1+ JSON tool calls; gpt-oss the Harmony format (the gpt-oss recipe). Parser names are
# those of vllm/tool_parsers/__init__.py and vllm/reasoning/__init__.py at v0.19.1.
PARSERS_BY_MODEL_TYPE: dict[str, tuple[str | None, str | None]] = {
    "qwen2": (None, "hermes"),
    "qwen2_moe": (None, "hermes"),
    "qwen3": ("qwen3", "hermes"),
    "qwen3_moe": ("qwen3", "hermes"),
    "qwen3_next": ("qwen3", "hermes"),
    "qwen3_5": ("qwen3", "qwen3_coder"),
    "qwen3_5_moe": ("qwen3", "qwen3_coder"),
    "llama": (None, "llama3_json"),
    "gpt_oss": ("openai_gptoss", "openai"),
}


class Unworkable(Exception):
    """A TP, DP or maxModelLen the user asked for that cannot serve the model; says what can."""


class DoesNotFit(Exception):
    """The model cannot be served on these GPUs; says how many it would take."""

    def __init__(self, message: str, gpus_needed: int | None) -> None:
        super().__init__(message)
        self.gpus_needed = gpus_needed
        """Fewest GPUs of this kind that serve it (a TP the heads allow); None beyond MAX_GPUS."""


class EngineChoice(msgspec.Struct, frozen=True):
    """What `init` writes under engine, and the figures its comments quote."""

    tp: int
    """tensorParallelSize."""
    dp: int
    """dataParallelSize: engines of tp GPUs each, every one with the whole model."""
    roomy: bool
    """The weights leave each GPU a KV cache at least as large (why dp > 1 is proposed)."""
    smallest_tp: int
    """The smallest TP that serves: below tp when fewer GPUs hold the model but without room
    for copies (the stack's comment says why one engine spans them all)."""
    dtype: str
    """engine.dtype in vLLM's spelling (`half`, `bfloat16`, `float32`)."""
    gpu_memory_utilization: float
    """The utilization the planner sized the context with, written to the stack (vLLM's default up
    to v0.19; config/cache.py's default is 0.92 in v0.20 to v0.33)."""
    max_model_len: int
    """engine.maxModelLen."""
    limited_by: Literal["model", "memory"]
    """Whether the model's max_position_embeddings or the KV cache set maxModelLen."""
    concurrency: float
    """Full-length requests the KV cache holds at maxModelLen."""
    weights_gib_per_gpu: float
    """Weights each GPU holds at this TP."""
    reasoning_parser: str | None
    """engine.reasoningParser, when the model type has one in the release."""
    tool_call_parser: str | None
    """engine.toolCallParser, when the model type has one in the release."""


def vllm_dtype(model: ModelArchitecture, gpu: GpuSpec) -> str:
    """engine.dtype for the model on this GPU, spelled as the stacks spell it."""
    compute = compute_dtype(model, gpu, None)
    if compute == "float16" and model.refuses_float16:
        return "float32"
    return {"float16": "half"}.get(compute, compute)


def splits_model(model: ModelArchitecture, gpu: GpuSpec, tp: int) -> bool:
    """Whether the parallelism rules accept this TP for the model (on a host with tp GPUs)."""
    settings = StackSettings.model_validate({
        "hardware": {"gpu": gpu.name, "count": tp},
        "image": {"tag": PINNED_TAG},
        "model": {"architecture": model, "hostPath": "/models/model"},
        "engine": {"tensorParallelSize": tp},
    })
    ctx = Context(resolve(settings, "init"))
    return all(RULES_BY_CODE[code].test(ctx) is None for code in HEAD_RULES)


def _plan(model: ModelArchitecture, gpu: GpuSpec, tp: int, dtype: str, max_len: int, tag: str) -> CapacityPlan:
    return plan(CapacityInputs(
        model=model, gpu=gpu, tp=tp, dtype=dtype, gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION,
        max_model_len=max_len, vllm_version=parse_vllm_version(tag)))


def longest_context(model: ModelArchitecture, gpu: GpuSpec, tp: int, dtype: str, tag: str) -> int:
    """Longest request the KV cache holds at this TP (0 when the weights do not fit), capped at
    the model's max_position_embeddings."""
    found = _plan(model, gpu, tp, dtype, model.max_position_embeddings, tag)
    return found.max_model_len_that_fits if found.weights_fit else 0


def _serves(model: ModelArchitecture, gpu: GpuSpec, tp: int, dtype: str, tag: str, needed: int | None = None) -> bool:
    """Whether TP splits the model and holds the weights and one request of `needed` tokens
    (default: MIN_USEFUL_CONTEXT, or the model's whole context when that is shorter)."""
    needed = needed or min(MIN_USEFUL_CONTEXT, model.max_position_embeddings)
    return splits_model(model, gpu, tp) and longest_context(model, gpu, tp, dtype, tag) >= needed


def has_room(model: ModelArchitecture, gpu: GpuSpec, tp: int, dtype: str, tag: str) -> bool:
    """One engine at this TP leaves each GPU a KV cache at least as large as its share of the weights."""
    found = _plan(model, gpu, tp, dtype, min(MIN_USEFUL_CONTEXT, model.max_position_embeddings), tag)
    return found.weights_fit and found.available_kv_gib >= found.weights_gib_per_gpu


def _powers_of_two(limit: int) -> list[int]:
    return [2**i for i in range(limit.bit_length()) if 2**i <= limit]


def gpus_needed(model: ModelArchitecture, gpu: GpuSpec, tag: str = PINNED_TAG) -> int | None:
    """Fewest GPUs (a power-of-two TP the heads allow) on which the model serves a useful
    context; None when even MAX_GPUS do not."""
    dtype = vllm_dtype(model, gpu)
    return next((tp for tp in _powers_of_two(MAX_GPUS) if _serves(model, gpu, tp, dtype, tag)), None)


def nice_context(tokens: int) -> int:
    """Rounded down to whole K, so the stack reads 230K rather than 236400."""
    return tokens if tokens < CONTEXT_STEP else tokens // CONTEXT_STEP * CONTEXT_STEP


def parsers(model: ModelArchitecture, tag: str) -> tuple[str | None, str | None]:
    """(reasoning, tool-call) parser for the model type, each only if the release registers it."""
    reasoning, tool = PARSERS_BY_MODEL_TYPE.get(model.model_type, (None, None))
    release, _ = release_for_tag(tag)
    return (reasoning if reasoning in release.reasoning_parsers else None,
            tool if tool in release.tool_parsers else None)


def _parallelism(model: ModelArchitecture, gpu: GpuSpec, count: int, tag: str, needed: int | None,
                 tp: int | None, dp: int | None) -> tuple[int, int, bool, int]:
    """(TP, DP, roomy, smallest TP that serves) for `count` GPUs; Unworkable for an asked TP/DP that cannot serve,
    DoesNotFit when no TP does."""
    dtype = vllm_dtype(model, gpu)
    where = f"{count} x {gpu.name}"
    if tp is not None and tp * (dp or 1) > count:
        asked = f"--tp {tp} x --dp {dp}" if dp else f"--tp {tp}"
        raise Unworkable(f"{asked} needs {tp * (dp or 1)} GPUs; {where} has {count}")
    if dp is not None and dp > count:
        raise Unworkable(f"--dp {dp} needs at least {dp} GPUs; {where} has {count}")
    sizes = [tp] if tp is not None else [t for t in _powers_of_two(count // (dp or 1))]
    serving = [t for t in sizes if _serves(model, gpu, t, dtype, tag, needed)]
    if tp is not None and not serving:
        why = ("does not split the model's heads evenly" if not splits_model(model, gpu, tp)
               else f"does not hold the weights and a {needed or MIN_USEFUL_CONTEXT}-token request")
        raise Unworkable(f"--tp {tp} {why} on {gpu.name}; leave --tp out and init picks one that does")
    if not serving:
        need = gpus_needed(model, gpu, tag)
        if need is None:
            raise DoesNotFit(f"{where}: the model does not fit, nor on up to {MAX_GPUS} of them", None)
        if dp is not None and need * dp > count:
            raise Unworkable(f"--dp {dp}: each engine needs {need} x {gpu.name}; {where} gives {count // dp}")
        raise DoesNotFit(
            f"{where}: the weights ({model.total_weights_gib:.1f} GiB) and a {needed or MIN_USEFUL_CONTEXT}-token "
            f"request do not fit; it needs {need} GPUs of this kind (tensorParallelSize {need})", need)
    roomy = [t for t in serving if has_room(model, gpu, t, dtype, tag)]
    if dp is not None:
        chosen = max(serving)
        return chosen, dp, chosen in roomy, min(serving)
    if tp is None and roomy and count // min(roomy) > 1:
        return min(roomy), count // min(roomy), True, min(serving)
    chosen = max(serving)
    return chosen, 1, chosen in roomy, min(serving)


def choose_engine(model: ModelArchitecture, gpu: GpuSpec, count: int, tag: str = PINNED_TAG,
                  tp: int | None = None, dp: int | None = None, max_model_len: int | None = None) -> EngineChoice:
    """The engine section for `count` GPUs (TP, DP and maxModelLen chosen unless given); DoesNotFit
    (with the GPUs it needs) when none serves, Unworkable for a given value that cannot."""
    if max_model_len is not None and max_model_len > model.max_position_embeddings:
        raise Unworkable(f"--max-model-len {max_model_len} is beyond the model's own limit "
                         f"({model.max_position_embeddings} tokens, max_position_embeddings)")
    dtype = vllm_dtype(model, gpu)
    tp, dp, roomy, smallest_tp = _parallelism(model, gpu, count, tag, max_model_len, tp, dp)
    longest = longest_context(model, gpu, tp, dtype, tag)
    limited_by: Literal["model", "memory"] = "model" if longest >= model.max_position_embeddings else "memory"
    if max_model_len is not None:
        max_len = max_model_len
    else:
        max_len = model.max_position_embeddings if limited_by == "model" else nice_context(longest)
    chosen = _plan(model, gpu, tp, dtype, max_len, tag)
    assert chosen.fits_one_request, "the planner's longest request must fit"
    reasoning, tool = parsers(model, tag)
    return EngineChoice(
        tp=tp, dp=dp, roomy=roomy, smallest_tp=smallest_tp, dtype=dtype,
        gpu_memory_utilization=DEFAULT_GPU_MEMORY_UTILIZATION,
        max_model_len=max_len, limited_by=limited_by, concurrency=chosen.max_concurrency,
        weights_gib_per_gpu=chosen.weights_gib_per_gpu, reasoning_parser=reasoning, tool_call_parser=tool,
    )
