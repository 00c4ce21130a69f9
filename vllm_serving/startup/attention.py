"""The attention backend vLLM selects for a model on a GPU, and whether it can read the KV cache.

As `platforms/cuda.py` `CudaPlatformBase.get_attn_backend_cls` does it (v0.19.1), with the
release's own facts (`engine.release_facts`): a forced `--attention-backend` is checked alone
("Selected backend ... is not valid for this configuration. Reason: [...]"); otherwise the
backends of `_get_backend_priorities` are tried in order and the first whose
`validate_configuration` passes is used ("No valid attention backend found" when none does).
Each layer asks on its own (`v1/attention/selector.py`): a sliding-window layer may differ.

Then what only the running kernels decide: the dtype the backend stores an FP8 cache in
(`kv_cache_storage`: FlashAttention raises on fp8_e5m2, Triton views every fp8* as
float8_e4m3fn) and, for backends reading it through Triton, whether Triton compiles that FP8
type for the GPU (`TRITON_FP8_MIN_CAPABILITY`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from msgspec.structs import replace

from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.engine import release_facts
from vllm_serving.engine.expressions import Capability, MissingInput, Unsupported, evaluate
from vllm_serving.engine.release_registry import VllmRelease

# Triton's FP8 types by GPU architecture - a fact of the compiler, not of vLLM: Triton's NVIDIA
# backend (triton third_party/nvidia/backend/compiler.py, CUDABackend.parse_options) supports
# fp8e5 (torch.float8_e5m2) and fp8e4b15 on every architecture and adds fp8e4nv
# (torch.float8_e4m3fn) from capability 89; below it a kernel reading e4m3fn fails to compile
# ("type fp8e4nv not supported in this architecture", vllm#26431).
TRITON_FP8_MIN_CAPABILITY: Mapping[str, tuple[int, int]] = {"float8_e4m3fn": (8, 9), "float8_e5m2": (0, 0)}
TRITON_SOURCE = "triton third_party/nvidia/backend/compiler.py CUDABackend.parse_options (supported_fp8_dtypes)"
AUTO = "auto"


class AttentionQuery(msgspec.Struct, frozen=True):
    """What one attention layer hands `get_attn_backend` (v1/attention/selector.py)."""

    head_size: int
    dtype: str
    kv_cache_dtype: str
    capability: tuple[int, int]
    block_size: int | None = None
    use_mla: bool = False
    has_sink: bool = False
    use_mm_prefix: bool = False
    has_sliding_window: bool = False
    num_heads: int | None = None
    use_batch_invariant: bool = False

    def values(self, release: VllmRelease) -> dict[str, Any]:
        """The expressions' inputs; every other flag of the selector keeps its default."""
        cap = Capability(*self.capability)
        values: dict[str, Any] = {
            "head_size": self.head_size, "dtype": self.dtype, "kv_cache_dtype": self.kv_cache_dtype,
            "block_size": self.block_size, "use_mla": self.use_mla, "has_sink": self.has_sink,
            "use_sparse": False, "use_mm_prefix": self.use_mm_prefix, "use_per_head_quant_scales": False,
            "device_capability": cap, "attn_type": "decoder", "has_sliding_window": self.has_sliding_window,
            "use_non_causal": False, "use_batch_invariant": self.use_batch_invariant, "use_kv_connector": False,
            "use_pcp": False, "use_dcp": False, "use_rswa": False, "use_adaptive_verification": False,
            "num_heads": self.num_heads,
        }
        chosen = release_facts.selection(release)
        values["fa_version"] = _safe(chosen.fa_version, values) if chosen and chosen.fa_version else None
        return values


class Verdict(msgspec.Struct, frozen=True):
    """The backend a layer gets, or why it gets none."""

    backend: str | None
    forced: bool
    reasons: tuple[str, ...] = ()
    """Why the forced backend is invalid (empty: it is valid)."""
    tried: Mapping[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    """Auto-selection: each backend tried before the one chosen, with its reasons."""
    undecided: bool = False
    """A check the registry could not read stood in the way: nothing is concluded."""


def _safe(text: str, values: Mapping[str, Any]) -> Any:
    try:
        return evaluate(text, values)
    except (MissingInput, Unsupported, TypeError):
        return None


def invalid_reasons(release: VllmRelease, backend: str, query: AttentionQuery) -> tuple[tuple[str, ...], bool] | None:
    """`validate_configuration`'s reasons for this layer, and whether a check was unreadable;
    None when the release's registry has no checks for the backend."""
    facts = release_facts.backends(release).get(backend)
    if facts is None or facts.checks is None:
        return None
    values = query.values(release)
    reasons: list[str] = []
    unreadable = False
    for check in facts.checks:
        if check.when is None:
            unset = check.passes_when_unset
            unreadable = unreadable or unset is None or bool(values.get(unset))
            continue
        tripped = _safe(check.when, values)
        if tripped is None:
            unreadable = True
        elif tripped:
            reason = _safe(check.reason_expr, values) if check.reason_expr else check.reason
            reasons.append(str(reason).format(**values) if reason is not None else "invalid")
    return tuple(reasons), unreadable


def priorities(release: VllmRelease, query: AttentionQuery) -> list[str] | None:
    chosen = release_facts.selection(release)
    text = chosen.priorities.get("mla" if query.use_mla else "default") if chosen else None
    order = _safe(text, query.values(release)) if text else None
    return [str(b) for b in order] if isinstance(order, list) else None


def select(release: VllmRelease, query: AttentionQuery, forced: str | None) -> Verdict | None:
    """The verdict for one layer; None when the release's registry cannot say."""
    if forced is not None:
        found = invalid_reasons(release, forced, query)
        if found is None:
            return None
        reasons, unreadable = found
        return Verdict(forced, True, reasons, undecided=unreadable and not reasons)
    order = priorities(release, query)
    if order is None:
        return None
    tried: dict[str, tuple[str, ...]] = {}
    for backend in order:
        found = invalid_reasons(release, backend, query)
        if found is None or (found[1] and not found[0]):
            return Verdict(None, False, tried=tried, undecided=True)
        if not found[0]:
            return Verdict(backend, False, tried=tried)
        tried[backend] = found[0]
    return Verdict(None, False, tried=tried)


def kv_read_failure(release: VllmRelease, backend: str, query: AttentionQuery) -> str | None:
    """Why the backend cannot read this layer's FP8 cache once running, or None."""
    if not query.kv_cache_dtype.startswith("fp8"):
        return None
    facts = release_facts.backends(release).get(backend)
    storage = facts.kv_cache_storage if facts is not None else None
    if storage is None or query.kv_cache_dtype not in storage:
        return None
    stored = storage[query.kv_cache_dtype]
    if stored is None:
        return f"it has no FP8 type for {query.kv_cache_dtype} (it raises 'Unrecognized FP8 dtype')"
    need = TRITON_FP8_MIN_CAPABILITY.get(stored)
    if facts is not None and facts.kernels == "triton" and need is not None and query.capability < need:
        return (f"it stores {query.kv_cache_dtype} as {stored}, which Triton compiles only from compute "
                f"capability {need[0]}.{need[1]}")
    return None


def layer_queries(base: AttentionQuery, model: ModelArchitecture) -> list[AttentionQuery]:
    """One query per kind of attention layer the model has (full, and sliding-window ones)."""
    queries = [base]
    if model.sliding_window_layers and model.sliding_window_layers < model.full_attention_layers:
        queries.append(replace(base, has_sliding_window=True))
    elif model.sliding_window_layers:
        queries = [replace(base, has_sliding_window=True)]
    return queries


def query_for(release: VllmRelease, model: ModelArchitecture, gpu: GpuSpec, dtype: str, kv_cache_dtype: str | None,
              *, use_mla: bool, block_size: int | None = None, text_only: bool = False,
              batch_invariant: bool = False, tp: int = 1) -> AttentionQuery:
    """The query a model's (full-attention) layers make, with the release's model facts: attention
    sinks by architecture, multimodal-prefix attention by model type (`is_mm_prefix_lm`)."""
    facts = release_facts.models(release)
    mm_prefix = model.model_type in (facts.mm_prefix_model_types or ())
    if text_only and facts.mm_prefix_off_when_text_only:
        mm_prefix = False
    head = model.mla.cache_dim if (use_mla and model.mla is not None) else model.head_dim
    return AttentionQuery(
        head_size=head, dtype=dtype, kv_cache_dtype=kv_cache_dtype or AUTO, capability=gpu.compute_capability,
        block_size=block_size, use_mla=use_mla, has_sink=facts.sink_architectures.get(model.architecture) == "always",
        use_mm_prefix=mm_prefix, num_heads=max(1, model.num_attention_heads // tp), use_batch_invariant=batch_invariant,
    )
