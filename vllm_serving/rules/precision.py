"""Number formats against the GPU: the compute dtype and FP8 weights (attention and the KV cache:
attention.py).

The FP8 minimum is the release's `Fp8Config.get_min_capability`, the models refused in float16
its `_FLOAT16_NOT_SUPPORTED_MODELS` (both from the registry); the W8A8 boundary is the Marlin
kernel's own check (cited).
"""

from __future__ import annotations

from vllm_serving.engine import release_facts
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import KEY, Context, Facts, Rule

# Full FP8 (W8A8) from CC 8.9; below it FP8 Marlin runs weight-only
# (model_executor/kernels/linear/scaled_mm/marlin.py `MarlinFP8ScaledMMLinearKernel.is_supported`).
FP8_W8A8_CC = (8, 9)
# `dtype` values meaning float16 (config/model.py `_STR_DTYPE_TO_TORCH_DTYPE`).
FLOAT16 = ("half", "float16")


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


def refuses_float16(ctx: Context) -> bool:
    """The release's `_FLOAT16_NOT_SUPPORTED_MODELS` (by model type); the catalog's flag for a
    registry that does not list them."""
    refused = release_facts.models(ctx.release).float16_refused
    return ctx.model.model_type in refused if refused is not None else ctx.model.refuses_float16


def _refuses_fp16(ctx: Context) -> Facts | None:
    if refuses_float16(ctx) and ctx.engine.dtype in FLOAT16:
        return {"type": ctx.model.model_type, "arch": ctx.model.architecture, "version": ctx.release.tag}
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


DTYPE = config_key("engine", "dtype")

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
         "{arch} (model type {type}) does not run in float16 in vLLM {version}",
         "set engine.dtype: bfloat16 on a GPU with CC 8.0+, or float32 (auto picks it on older GPUs)",
         "`dtype: half` for a model type the release refuses in float16 (v0.19.1: gemma2, gemma3, "
         "gemma3_text, glm4, plamo2).",
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
)
