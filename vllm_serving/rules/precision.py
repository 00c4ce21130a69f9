"""Number formats against the GPU: dtype, FP8 weights and KV cache, quantization, attention
backends. Compute-capability limits per vllm-facts.md "Compute capability (CC) rules" (v0.19)."""

from __future__ import annotations

from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule

FACTS = "vllm-facts.md, Compute capability rules"

# Attention backend -> (lowest CC, highest CC) it runs on (vllm-facts.md; v0.19 backends).
BACKEND_CC: dict[str, tuple[float, float]] = {
    "FLASH_ATTN": (8.0, 99.0),  # FlashAttention-2 from Ampere (FA3 on 9.x, FA4 on 10.x)
    "FLASHINFER": (7.5, 12.1),
    "TRITON_ATTN": (0.0, 99.0),
    "FLEX_ATTENTION": (0.0, 99.0),
    "TREE_ATTN": (0.0, 99.0),
}

# Quantization method -> lowest CC with kernels for it (fp8 has its own rules).
QUANT_MIN_CC: dict[str, float] = {
    "awq": 7.5, "awq_marlin": 8.0, "gptq": 6.0, "gptq_marlin": 8.0, "marlin": 8.0,
}


def fp8_kv_backends(cc: float) -> list[str]:
    """Backends that read an FP8 KV cache on this CC: FA3 on 9.x, FlashInfer on 7.5-12.1,
    Triton from 8.9 (e4m3 fails below, vllm#26431). FA2 and FlexAttention never."""
    backends = []
    if 9.0 <= cc < 10.0:
        backends.append("FLASH_ATTN")
    if 7.5 <= cc <= 12.1:
        backends.append("FLASHINFER")
    if cc >= 8.9:
        backends.append("TRITON_ATTN")
    return backends


def _bf16_explicit(ctx: Context) -> Facts | None:
    if ctx.engine.dtype == "bfloat16" and not ctx.gpu.supports_bf16:
        return {"gpu": ctx.gpu.name, "cc": ctx.cc}
    return None


def _auto_half(ctx: Context) -> Facts | None:
    auto = ctx.engine.dtype in (None, "auto")
    if auto and ctx.model.weights_dtype == "bfloat16" and not ctx.gpu.supports_bf16:
        if not ctx.model.refuses_float16:  # that case is an error of its own
            return {"gpu": ctx.gpu.name, "cc": ctx.cc}
    return None


def _refuses_fp16(ctx: Context) -> Facts | None:
    if ctx.model.refuses_float16 and ctx.compute_dtype == "float16":
        return {"arch": ctx.model.architecture, "gpu": ctx.gpu.name}
    return None


def _fp8_weights_none(ctx: Context) -> Facts | None:
    if ctx.fp8_weights and not ctx.gpu.supports_fp8_weight_only:
        return {"gpu": ctx.gpu.name, "cc": ctx.cc}
    return None


def _fp8_weights_marlin(ctx: Context) -> Facts | None:
    if ctx.fp8_weights and ctx.gpu.supports_fp8_weight_only and not ctx.gpu.supports_fp8_w8a8:
        return {"gpu": ctx.gpu.name, "cc": ctx.cc}
    return None


def _fp8_kv_none(ctx: Context) -> Facts | None:
    if ctx.fp8_kv and not fp8_kv_backends(ctx.gpu.cc):
        return {"gpu": ctx.gpu.name, "cc": ctx.cc, "kv": ctx.engine.kv_cache_dtype}
    return None


def _fp8_kv_backend(ctx: Context) -> Facts | None:
    backend = ctx.engine.attention_backend
    able = fp8_kv_backends(ctx.gpu.cc)
    if ctx.fp8_kv and able and backend is not None and backend not in able:
        return {"backend": backend, "gpu": ctx.gpu.name, "cc": ctx.cc, "able": ", ".join(able)}
    return None


def _fp8_kv_unpinned(ctx: Context) -> Facts | None:
    able = fp8_kv_backends(ctx.gpu.cc)
    # Where FlashAttention is the default but cannot read FP8 (CC 8.x), pin the one that can.
    if ctx.fp8_kv and ctx.engine.attention_backend is None and able and "FLASH_ATTN" not in able:
        if ctx.gpu.cc >= 8.0:
            return {"gpu": ctx.gpu.name, "cc": ctx.cc, "able": ", ".join(able)}
    return None


def _quant_cc(ctx: Context) -> Facts | None:
    method = ctx.quantization
    need = QUANT_MIN_CC.get(method or "")
    if method and need is not None and ctx.gpu.cc < need:
        return {"method": method, "need": need, "gpu": ctx.gpu.name, "cc": ctx.cc}
    return None


def _backend_cc(ctx: Context) -> Facts | None:
    backend = ctx.engine.attention_backend
    if backend is None or backend not in BACKEND_CC:
        return None
    low, high = BACKEND_CC[backend]
    if not low <= ctx.gpu.cc <= high:
        able = [b for b, (lo, hi) in BACKEND_CC.items() if lo <= ctx.gpu.cc <= hi]
        return {"backend": backend, "gpu": ctx.gpu.name, "cc": ctx.cc, "low": low,
                "high": high, "able": ", ".join(able)}
    return None


DTYPE = config_key("engine", "dtype")
KV = config_key("engine", "kvCacheDtype")
BACKEND = config_key("engine", "attentionBackend")

RULES: tuple[Rule, ...] = (
    Rule("dtype-bf16-unsupported", Severity.ERROR, DTYPE,
         "bfloat16 needs compute capability 8.0; {gpu} has {cc}",
         "set engine.dtype: half (float16)",
         "`dtype: bfloat16` on a GPU below CC 8.0 (V100, T4).",
         "vLLM exits at startup: \"Bfloat16 is only supported on GPUs with compute capability of at least 8.0\".",
         f"{FACTS}; vllm/v1/worker/gpu_worker.py _check_if_gpu_supports_dtype", _bf16_explicit),
    Rule("dtype-auto-falls-back-to-half", Severity.WARNING, DTYPE,
         "dtype auto with a bfloat16 checkpoint on {gpu} (CC {cc}) runs in float16",
         "set engine.dtype: half so the stack says what runs",
         "`dtype` unset/auto, a bf16 checkpoint and a GPU without bf16.",
         "vLLM silently casts to float16; values outside fp16's range can overflow, so say it.",
         FACTS, _auto_half),
    Rule("dtype-fp16-refused", Severity.ERROR, DTYPE,
         "{arch} does not run in float16, the only 16-bit format on {gpu}",
         "use a GPU with CC 8.0+ and dtype bfloat16, or engine.dtype: float32",
         "A model vLLM refuses to run in float16 (gemma2, gemma3, glm4, plamo2) resolving to float16.",
         "vLLM rejects the dtype at startup (numerical instability of these architectures in fp16).",
         FACTS, _refuses_fp16),
    Rule("fp8-weights-unsupported", Severity.ERROR, config_key("model", "name"),
         "FP8 weights need compute capability 7.5 (weight-only) or 8.9 (W8A8); {gpu} has {cc}",
         "use the bfloat16 checkpoint with engine.dtype: half, or a GPTQ/AWQ one",
         "An FP8 checkpoint (or `quantization: fp8`) below CC 7.5.",
         "No FP8 kernels exist below Turing: the model does not load.",
         FACTS, _fp8_weights_none),
    Rule("fp8-weights-weight-only", Severity.WARNING, config_key("model", "name"),
         "FP8 weights on {gpu} (CC {cc}) run weight-only (W8A16) through FP8 Marlin kernels",
         "expected on CC 7.5-8.6: memory halves but compute stays 16-bit; full FP8 needs CC 8.9",
         "An FP8 checkpoint on CC 7.5-8.6 (T4, A100, A10).",
         "It works, but slower than FP8 on Ada/Hopper; worth knowing when sizing throughput.",
         FACTS, _fp8_weights_marlin),
    Rule("fp8-kv-cache-unsupported", Severity.ERROR, KV,
         "no attention backend reads a {kv} KV cache on {gpu} (CC {cc})",
         "remove engine.kvCacheDtype (auto) and fit the context with maxModelLen or more GPUs",
         "An FP8 KV cache below CC 7.5 (FlashInfer's minimum); V100 has no verified FP8 KV path.",
         "vLLM fails at engine start or in the first forward pass.",
         FACTS, _fp8_kv_none),
    Rule("fp8-kv-cache-backend", Severity.ERROR, BACKEND,
         "{backend} cannot read an FP8 KV cache on {gpu} (CC {cc})",
         "set engine.attentionBackend to one of: {able}",
         "An FP8 KV cache with a forced backend that lacks FP8 KV on this GPU (FA2, Flex, Triton < 8.9).",
         "FlashAttention-2 has no FP8 KV support; Triton fails with e4m3 below CC 8.9 (vllm#26431).",
         f"{FACTS}; vllm#26431", _fp8_kv_backend),
    Rule("fp8-kv-cache-backend-unpinned", Severity.WARNING, BACKEND,
         "an FP8 KV cache on {gpu} (CC {cc}) needs {able}, but no backend is pinned",
         "set engine.attentionBackend: FLASHINFER",
         "An FP8 KV cache on CC 8.x with engine.attentionBackend unset.",
         "FlashAttention-2, the default there, cannot read it; the choice should not rest on auto-selection.",
         FACTS, _fp8_kv_unpinned),
    Rule("quantization-cc-too-low", Severity.ERROR, config_key("engine", "quantization"),
         "{method} kernels need compute capability {need}; {gpu} has {cc}",
         "use a GPTQ checkpoint (runs on Volta) or a GPU with CC {need}+",
         "Quantization minimums: AWQ 7.5, AWQ-Marlin/GPTQ-Marlin/Marlin 8.0, GPTQ 6.0.",
         "The quantization method is rejected at startup (\"not supported for the current GPU\").",
         FACTS, _quant_cc),
    Rule("attention-backend-unsupported", Severity.ERROR, BACKEND,
         "{backend} runs on compute capability {low}-{high}; {gpu} has {cc}",
         "remove engine.attentionBackend or pick one of: {able}",
         "A forced attention backend the GPU cannot run (FLASH_ATTN < 8.0, FLASHINFER outside 7.5-12.1).",
         "vLLM refuses the backend at startup.",
         FACTS, _backend_cc),
)
