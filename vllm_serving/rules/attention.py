"""Attention: the backend vLLM would use for the model on this GPU, and the KV cache it reads.

Decided as the image's release decides it (`startup/attention.py`, from the registry's folded
`validate_configuration` checks and `_get_backend_priorities`): a forced backend is checked alone,
otherwise auto-selection takes the first valid backend in the release's order. What the model
brings counts: attention sinks (gpt-oss) need FlashAttention 3 (9.x) or FlashInfer's TRT-LLM path
(10.x) and otherwise leave Triton; multimodal-prefix attention (Gemma 3) only Triton and Flex
take; float32 only Triton and Flex. An FP8 cache is then checked against the backend actually
chosen: Triton stores every fp8* spelling as float8_e4m3fn, which Triton compiles only from CC 8.9.
An MLA model's backend is model_sizing.py's; only whether it reads the FP8 cache is judged here
(the MLA layer views the cache as float8_e4m3fn, which TRITON_MLA reads through Triton). The CPU
target has its own backend.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

import msgspec

from vllm_serving.engine import release_facts
from vllm_serving.findings import Severity, config_key
from vllm_serving.planner.mla_backends import mla_disabled_env
from vllm_serving.rules.base import KEY, Context, Facts, Rule
from vllm_serving.startup.attention import (
    TRITON_SOURCE,
    AttentionQuery,
    Verdict,
    invalid_reasons,
    kv_read_failure,
    layer_queries,
    priorities,
    query_for,
    select,
)

BACKEND = config_key("engine", "attentionBackend")
KV = config_key("engine", "kvCacheDtype")
KV_REASON = "kv_cache_dtype not supported"
LANGUAGE_ONLY = "--language-model-only"
BLOCK_SIZE = "--block-size"
BATCH_INVARIANT_ENV = "VLLM_BATCH_INVARIANT"
OTHER_PLATFORMS = ("ROCM", "XPU", "CPU")  # backend names of other platforms, left out of suggestions


class Layer(msgspec.Struct, frozen=True):
    """One kind of attention layer: what it asks, and what the release answers."""

    query: AttentionQuery
    verdict: Verdict | None
    failure: str | None  # why the chosen backend cannot read the KV cache at run time

    @property
    def mla(self) -> bool:
        """An MLA layer: only its KV cache is judged here (the backend itself: model_sizing.py)."""
        return self.query.use_mla


_LAYERS: WeakKeyDictionary[Context, list[Layer]] = WeakKeyDictionary()


def forced(ctx: Context) -> str | None:
    """`engine.attentionBackend` as vLLM reads it (`AttentionConfig`: upper-cased, `auto` = none)."""
    name = ctx.engine.attention_backend
    return None if name is None or name.lower() == "auto" else name.upper()


def _block_size(ctx: Context) -> int | None:
    values = [v for _, v in ctx.extra_values(BLOCK_SIZE)]
    return int(values[-1]) if values and values[-1].isdigit() else None


def _flag_env(ctx: Context, name: str) -> bool:
    value = ctx.engine.env.get(name, "0").strip()
    return value.lstrip("-").isdigit() and int(value) != 0


def layers(ctx: Context) -> list[Layer]:
    """Per kind of attention layer, the release's verdict (empty: not a GPU target)."""
    found = _LAYERS.get(ctx)
    if found is not None:
        return found
    found = []
    use_mla = ctx.model.mla is not None and not mla_disabled_env(ctx.engine.env)
    if ctx.settings.hardware.uses_gpus:
        base = query_for(ctx.release, ctx.model, ctx.gpu, ctx.compute_dtype, ctx.engine.kv_cache_dtype,
                         use_mla=use_mla, block_size=_block_size(ctx),
                         text_only=ctx.extra_switch(LANGUAGE_ONLY) is True,
                         batch_invariant=_flag_env(ctx, BATCH_INVARIANT_ENV), tp=ctx.tp)
        seen: set[tuple[object, ...]] = set()
        for query in ([base] if use_mla else layer_queries(base, ctx.model)):
            verdict = select(ctx.release, query, forced(ctx))
            chosen = verdict.backend if verdict is not None else None
            failure = kv_read_failure(ctx.release, chosen, query) if chosen else None
            key = (chosen, verdict.reasons if verdict else None, failure)
            if key not in seen:  # both layer kinds answered alike: one finding
                seen.add(key)
                found.append(Layer(query, verdict, failure))
    _LAYERS[ctx] = found
    return found


def _kv_only(reasons: tuple[str, ...]) -> bool:
    return bool(reasons) and all(r == KV_REASON for r in reasons)


def _able(ctx: Context, layer: Layer) -> str:
    """Backends of the release's auto order that are valid for this layer and read its KV cache."""
    able = []
    for backend in priorities(ctx.release, layer.query) or []:
        found = invalid_reasons(ctx.release, backend, layer.query)
        if found is not None and not found[0] and kv_read_failure(ctx.release, backend, layer.query) is None:
            able.append(backend)
    return ", ".join(able) if able else "none on this GPU"


def _where(ctx: Context) -> dict[str, object]:
    return {"gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text, "version": ctx.release.tag}


def _forced_invalid(ctx: Context) -> list[Facts] | None:
    hits: list[Facts] = [{**_where(ctx), "backend": layer.verdict.backend, "reasons": "; ".join(layer.verdict.reasons),
             "able": _able(ctx, layer)}
            for layer in layers(ctx) if layer.verdict and layer.verdict.forced and layer.verdict.reasons
            and not layer.mla and not (ctx.fp8_kv and _kv_only(layer.verdict.reasons))]
    return hits[:1] or None


def _forced_kv(ctx: Context) -> list[Facts] | None:
    for layer in layers(ctx):
        verdict = layer.verdict
        if verdict is None or not verdict.forced or not ctx.fp8_kv:
            continue
        why = layer.failure if not verdict.reasons else (
            f"its validate_configuration says {KV_REASON}" if _kv_only(verdict.reasons) and not layer.mla else None)
        if why:
            return [{**_where(ctx), "backend": verdict.backend, "kv": ctx.engine.kv_cache_dtype, "why": why,
                     "able": _able(ctx, layer)}]
    return None


def _auto_kv(ctx: Context) -> list[Facts] | None:
    """Auto-selection lands on a backend that cannot read the FP8 cache, or none takes it."""
    for layer in layers(ctx):
        verdict = layer.verdict
        if verdict is None or verdict.forced or not ctx.fp8_kv or verdict.undecided:
            continue
        if verdict.backend is not None and layer.failure:
            return [{**_where(ctx), "kv": ctx.engine.kv_cache_dtype,
                     "why": f"auto-selection picks {verdict.backend}, and {layer.failure}",
                     "able": _able(ctx, layer)}]
        if verdict.backend is None and verdict.tried and not layer.mla \
                and all(KV_REASON in r for r in verdict.tried.values()):
            return [{**_where(ctx), "kv": ctx.engine.kv_cache_dtype, "why": "no backend of the release accepts it",
                     "able": _able(ctx, layer)}]
    return None


def _no_backend(ctx: Context) -> list[Facts] | None:
    for layer in layers(ctx):
        verdict = layer.verdict
        if verdict is None or verdict.forced or verdict.backend is not None or verdict.undecided or not verdict.tried \
                or layer.mla:
            continue
        if ctx.fp8_kv and all(KV_REASON in r for r in verdict.tried.values()):
            continue  # the FP8 cache is the cause: fp8-kv-cache-unsupported says so
        tried = "; ".join(f"{b}: {', '.join(r)}" for b, r in verdict.tried.items())
        key = config_key("engine", "dtype") if all("dtype not supported" in r for r in verdict.tried.values()) \
            else config_key("hardware", "gpu")
        return [{KEY: key, **_where(ctx), "tried": tried}]
    return None


def _unknown_backend(ctx: Context) -> Facts | None:
    name = forced(ctx)
    known = release_facts.backends(ctx.release) or ctx.release.attention_backends
    if name is None or not known or name in known:
        return None
    usable = sorted(b for b in known if not b.startswith(OTHER_PLATFORMS) and b not in ("NO_ATTENTION", "CUSTOM"))
    return {"backend": ctx.engine.attention_backend, "version": ctx.release.tag, "valid": ", ".join(usable)}


SRC = ("vllm/platforms/cuda.py CudaPlatformBase.get_attn_backend_cls, _get_backend_priorities; "
       "vllm/v1/attention/backend.py AttentionBackend.validate_configuration; vllm/v1/attention/backends/*.py")

RULES: tuple[Rule, ...] = (
    Rule("attention-backend-unknown", Severity.ERROR, BACKEND,
         "attention backend {backend} is not one vLLM {version} has",
         "set engine.attentionBackend to one of {valid}, or remove it (auto-selection)",
         "A forced attention backend the release's registry does not list.",
         "vLLM exits while parsing the config: \"Unknown attention backend: ...\".",
         "vllm/v1/attention/backends/registry.py AttentionBackendEnum; vllm/config/attention.py "
         "AttentionConfig.validate_backend_before", _unknown_backend),
    Rule("attention-backend-unsupported", Severity.ERROR, BACKEND,
         "{backend} cannot run this model on {gpu} (CC {cc}) in vLLM {version}: {reasons}",
         "remove engine.attentionBackend (auto-selection), or use one of: {able}",
         "A forced attention backend the release refuses for this model, GPU and dtype: compute capability, "
         "attention sinks (gpt-oss: FlashInfer below 10.x, FlashAttention below 9.0), multimodal-prefix "
         "attention (Gemma 3: only Triton, Flex), float32, head size.",
         "vLLM exits: \"Selected backend ... is not valid for this configuration. Reason: [...]\".",
         SRC, _forced_invalid),
    Rule("fp8-kv-cache-backend", Severity.ERROR, BACKEND,
         "{backend} cannot read a {kv} KV cache on {gpu} (CC {cc}): {why}",
         "set engine.attentionBackend to one of {able}, or remove it (auto-selection picks one)",
         "An FP8 KV cache with a forced backend that refuses it, or stores it in an FP8 type the GPU's "
         "kernels cannot compile (Triton below CC 8.9, FlashAttention's fp8_e5m2).",
         "vLLM exits (\"kv_cache_dtype not supported\"), or the first forward pass fails (Triton: \"type "
         "fp8e4nv not supported in this architecture\"; FlashAttention: \"Unrecognized FP8 dtype\").",
         f"{SRC}; the backends' kv-cache storage (get_fp8_dtype_for_*, current_platform.fp8_dtype); {TRITON_SOURCE}",
         _forced_kv),
    Rule("fp8-kv-cache-unsupported", Severity.ERROR, KV,
         "vLLM {version} cannot serve a {kv} KV cache for this model on {gpu} (CC {cc}): {why}",
         "remove engine.kvCacheDtype (auto) and fit the context with maxModelLen or more GPUs; backends that "
         "read it here: {able}",
         "An FP8 KV cache the backend auto-selection lands on cannot read (Triton stores every fp8* as "
         "float8_e4m3fn: no FP8 below CC 8.9, and on A100 whenever sinks or multimodal prefix leave Triton).",
         "vLLM exits (\"No valid attention backend found\") or the first forward pass fails compiling the "
         "Triton kernel.",
         f"{SRC}; vllm/v1/attention/backends/triton_attn.py TritonAttentionImpl (current_platform.fp8_dtype); "
         f"{TRITON_SOURCE}; vllm#26431", _auto_kv),
    Rule("attention-no-backend", Severity.ERROR, config_key("hardware", "gpu"),
         "no attention backend of vLLM {version} runs this model on {gpu} (CC {cc}): {tried}",
         "use a GPU or engine.dtype a backend takes (see the reasons), or another model",
         "Auto-selection finds a backend for the model's head size, dtype and features on the GPU.",
         "vLLM exits at start-up: \"No valid attention backend found\".", SRC, _no_backend),
)
