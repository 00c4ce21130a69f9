"""Number formats against the GPU: dtype, FP8 weights and KV cache, attention backends.

Compute-capability limits come from the release's registry (each backend's
`supports_compute_capability`, each quantization config's `get_min_capability`) where vLLM
states them as data, and from the kernels' own checks (cited per rule) where it does not.
"""

from __future__ import annotations

from typing import get_args

from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import FP8_KV, KEY, Context, Facts, Rule
from vllm_serving.settings.engine import AttentionBackend

# The backends engine.attentionBackend may name, in vLLM's priority order on CUDA below
# Blackwell (platforms/cuda.py `_get_backend_priorities`).
BACKENDS: tuple[str, ...] = get_args(AttentionBackend)
# Where a backend's FP8 KV support is decided at run time or by its compiler rather than its
# class's list: (backend, KV dtype) -> [lowest, beyond highest) compute capability reading it.
# FlashAttention reads FP8 only as FA3, on the 9.x family (v1/attention/backends/fa_utils.py
# `flash_attn_supports_fp8`); Triton compiles e4m3 only from sm_89 ("type fp8e4nv not
# supported in this architecture", vllm#26431), e5m2 everywhere.
FP8_KV_CC: dict[tuple[str, str | None], tuple[tuple[int, int], tuple[int, int]]] = {
    **{("FLASH_ATTN", kv): ((9, 0), (10, 0)) for kv in FP8_KV},
    ("TRITON_ATTN", "fp8"): ((8, 9), (99, 0)),
    ("TRITON_ATTN", "fp8_e4m3"): ((8, 9), (99, 0)),
}
# Full FP8 (W8A8) from CC 8.9; below it FP8 Marlin runs weight-only
# (model_executor/kernels/linear/scaled_mm/marlin.py `MarlinFP8ScaledMMLinearKernel.is_supported`).
FP8_W8A8_CC = (8, 9)
# `dtype` values meaning float16 (config/model.py `_STR_DTYPE_TO_TORCH_DTYPE`).
FLOAT16 = ("half", "float16")


def runs_on(ctx: Context, backend: str) -> bool:
    """The backend's `supports_compute_capability` for this GPU (unknown counts as yes)."""
    found = ctx.release.attention_backends.get(backend)
    return found is None or found.supports_capability(*ctx.gpu.compute_capability) is not False


def reads_fp8_kv(ctx: Context, backend: str, kv: str | None) -> bool:
    """Whether a backend that runs on this GPU reads the KV dtype."""
    if (backend, kv) in FP8_KV_CC:
        low, beyond = FP8_KV_CC[backend, kv]
        return low <= ctx.gpu.compute_capability < beyond
    found = ctx.release.attention_backends.get(backend)
    return found is not None and kv in (found.kv_cache_dtypes or ())


def fp8_kv_backends(ctx: Context) -> list[str]:
    """Backends that read this stack's FP8 KV cache on its GPU."""
    return [b for b in BACKENDS if runs_on(ctx, b) and reads_fp8_kv(ctx, b, ctx.engine.kv_cache_dtype)]


def _bf16_explicit(ctx: Context) -> Facts | None:
    if ctx.engine.dtype == "bfloat16" and not ctx.gpu.supports_bf16:
        return {"gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text}
    return None


def _auto_fallback(ctx: Context) -> Facts | None:
    auto = ctx.engine.dtype in (None, "auto")
    if auto and ctx.model.weights_dtype == "bfloat16" and not ctx.gpu.supports_bf16:
        # the planner's resolution (planner/compute_dtype.py, as _resolve_auto_dtype): float16,
        # or float32 for the models refusing float16
        dtype = ctx.compute_dtype
        return {"gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text, "dtype": dtype,
                "setting": {"float16": "half"}.get(dtype, dtype)}
    return None


def _refuses_fp16(ctx: Context) -> Facts | None:
    if ctx.model.refuses_float16 and ctx.engine.dtype in FLOAT16:
        return {"type": ctx.model.model_type, "arch": ctx.model.architecture}
    return None


def _fp8_weights_key(ctx: Context) -> str:
    """The checkpoint when it is FP8, else the forced `quantization: fp8`."""
    return config_key("model", "name") if ctx.model.is_fp8 else config_key("engine", "quantization")


def _fp8_min_cc(ctx: Context) -> tuple[int, int]:
    need = ctx.release.quantization_methods["fp8"].min_capability
    assert need is not None  # Fp8Config.get_min_capability is a constant in every release
    return divmod(need, 10)


def _fp8_weights_none(ctx: Context) -> Facts | None:
    need = _fp8_min_cc(ctx)
    if ctx.fp8_weights and ctx.gpu.compute_capability < need:
        return {KEY: _fp8_weights_key(ctx), "gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text, "need": f"{need[0]}.{need[1]}"}
    return None


def _fp8_weights_marlin(ctx: Context) -> Facts | None:
    cc = ctx.gpu.compute_capability
    if ctx.fp8_weights and _fp8_min_cc(ctx) <= cc < FP8_W8A8_CC:
        return {KEY: _fp8_weights_key(ctx), "gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text}
    return None


def _fp8_kv_none(ctx: Context) -> Facts | None:
    if ctx.fp8_kv and not fp8_kv_backends(ctx):
        return {"gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text, "kv": ctx.engine.kv_cache_dtype}
    return None


def _fp8_kv_backend(ctx: Context) -> Facts | None:
    backend = ctx.engine.attention_backend
    able = fp8_kv_backends(ctx)
    if ctx.fp8_kv and able and backend is not None and runs_on(ctx, backend) and backend not in able:
        return {"backend": backend, "kv": ctx.engine.kv_cache_dtype, "gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text,
                "able": ", ".join(able)}
    return None


def _backend_cc(ctx: Context) -> Facts | None:
    backend = ctx.engine.attention_backend
    if backend is None or runs_on(ctx, backend):
        return None
    able = [b for b in BACKENDS if runs_on(ctx, b)]
    return {"backend": backend, "gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text, "able": ", ".join(able)}


DTYPE = config_key("engine", "dtype")
KV = config_key("engine", "kvCacheDtype")
BACKEND = config_key("engine", "attentionBackend")
BACKEND_SRC = "vllm/platforms/cuda.py CudaPlatformBase.get_attn_backend_cls; vllm/v1/attention/backend.py "

RULES: tuple[Rule, ...] = (
    Rule("dtype-bf16-unsupported", Severity.ERROR, DTYPE,
         "bfloat16 needs compute capability 8.0; {gpu} has {cc}",
         "set engine.dtype: half (float16)",
         "`dtype: bfloat16` on a GPU below CC 8.0 (V100, T4).",
         "vLLM exits at startup: \"Bfloat16 is only supported on GPUs with compute capability of at least 8.0\".",
         "vllm/platforms/cuda.py CudaPlatformBase.check_if_supports_dtype (from vllm/v1/worker/gpu_worker.py "
         "Worker.init_device)", _bf16_explicit),
    Rule("dtype-auto-falls-back-to-half", Severity.WARNING, DTYPE,
         "dtype auto with a bfloat16 checkpoint on {gpu} (CC {cc}) runs in {dtype}",
         "set engine.dtype: {setting} so the stack says what runs",
         "`dtype` unset/auto, a bf16 checkpoint and a GPU without bf16.",
         "vLLM casts to float16 (float32 for models refusing float16) with one log line; values "
         "outside fp16's range can overflow, and float32 doubles the weights.",
         "vllm/config/model.py _resolve_auto_dtype; vllm/platforms/cuda.py CudaPlatformBase.supported_dtypes",
         _auto_fallback),
    Rule("dtype-fp16-refused", Severity.ERROR, DTYPE,
         "{arch} (model type {type}) does not run in float16",
         "set engine.dtype: bfloat16 on a GPU with CC 8.0+, or float32 (auto picks it on older GPUs)",
         "`dtype: half` for a model vLLM refuses in float16 (gemma2, gemma3, glm4, plamo2).",
         "vLLM exits: \"The model type ... does not support float16. Reason: Numerical instability\".",
         "vllm/config/model.py _check_valid_dtype (_FLOAT16_NOT_SUPPORTED_MODELS)", _refuses_fp16),
    Rule("fp8-weights-unsupported", Severity.ERROR, config_key("model", "name"),
         "FP8 weights need compute capability {need}; {gpu} has {cc}",
         "use the bfloat16 checkpoint with engine.dtype: half, or a GPTQ/AWQ one",
         "An FP8 checkpoint (or `quantization: fp8`, then keyed there) below the release's FP8 minimum (CC 7.5).",
         "vLLM exits: \"The quantization method fp8 is not supported for the current GPU\".",
         "vllm/model_executor/layers/quantization/fp8.py Fp8Config.get_min_capability; vllm/config/vllm.py "
         "VllmConfig._get_quantization_config", _fp8_weights_none),
    Rule("fp8-weights-weight-only", Severity.WARNING, config_key("model", "name"),
         "FP8 weights on {gpu} (CC {cc}) run weight-only (W8A16) through FP8 Marlin kernels",
         "expected on CC 7.5-8.6: memory halves but compute stays 16-bit; full FP8 needs CC 8.9",
         "An FP8 checkpoint (or `quantization: fp8`) on CC 7.5-8.6 (T4, A100, A10).",
         "It works, but slower than FP8 on Ada/Hopper; worth knowing when sizing throughput.",
         "vllm/model_executor/kernels/linear/scaled_mm/marlin.py MarlinFP8ScaledMMLinearKernel.is_supported",
         _fp8_weights_marlin),
    Rule("fp8-kv-cache-unsupported", Severity.ERROR, KV,
         "no attention backend reads a {kv} KV cache on {gpu} (CC {cc})",
         "remove engine.kvCacheDtype (auto) and fit the context with maxModelLen or more GPUs",
         "An FP8 KV cache no backend reads on this GPU: FlashInfer needs CC 7.5, Triton's e4m3 8.9, "
         "FlashAttention FA3 on 9.x.",
         "vLLM exits (\"No valid attention backend found\") or Triton fails compiling the first forward pass.",
         BACKEND_SRC + "AttentionBackend.validate_configuration; vllm/v1/attention/backends/flashinfer.py; "
         "vllm/v1/attention/backends/fa_utils.py flash_attn_supports_fp8; vllm#26431", _fp8_kv_none),
    Rule("fp8-kv-cache-backend", Severity.ERROR, BACKEND,
         "{backend} cannot read a {kv} KV cache on {gpu} (CC {cc})",
         "set engine.attentionBackend to one of {able}, or remove it (auto-selection picks one)",
         "An FP8 KV cache with a forced backend that lacks it here (FlashAttention-2, Flex, Triton e4m3 < 8.9).",
         "vLLM exits: \"Selected backend ... is not valid for this configuration. Reason: "
         "['kv_cache_dtype not supported']\".",
         BACKEND_SRC + "AttentionBackend.validate_configuration; vllm#26431", _fp8_kv_backend),
    Rule("attention-backend-unsupported", Severity.ERROR, BACKEND,
         "{backend} does not run on {gpu} (CC {cc})",
         "remove engine.attentionBackend or pick one of: {able}",
         "A forced attention backend the GPU cannot run (FLASH_ATTN below 8.0, FLASHINFER outside 7.5-12.1).",
         "vLLM exits: \"Selected backend ... is not valid ... ['compute capability not supported']\".",
         BACKEND_SRC + "AttentionBackend.validate_configuration; the backends' supports_compute_capability",
         _backend_cc),
)
