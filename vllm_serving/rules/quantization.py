"""Quantization: the method exists in the image's release, fits the checkpoint, and the GPU runs it.

vLLM reads the checkpoint's method from its config.json (`quantization_config.quant_method`);
`--quantization` (engine.quantization) forces one, which must then agree with the checkpoint
(config/model.py `ModelConfig._verify_quantization`).
"""

from __future__ import annotations

from vllm_serving.engine.release_registry import QuantizationMethod
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import KEY, Context, Facts, Rule

QUANT = config_key("engine", "quantization")
# Methods that quantize a 16-bit checkpoint while loading it: their config classes read no
# config file (`get_config_filenames() == []`), so get_quant_config builds a default one
# (Fp8Config: online FP8; BitsAndBytesConfig: "Inflight BNB quantization"). experts_int8 does
# too, but only for MoE experts and behind --allow-deprecated-quantization.
ON_THE_FLY = frozenset({"fp8", "bitsandbytes"})
# Forced methods a checkpoint's own method also accepts: its Marlin variant, or "marlin", which
# the override maps to that variant (GPTQMarlinConfig/AWQMarlinConfig.override_quantization_method).
ACCEPTS: dict[str | None, dict[str, str]] = {
    "gptq": {"gptq_marlin": "gptq_marlin", "marlin": "gptq_marlin"},
    "awq": {"awq_marlin": "awq_marlin", "marlin": "awq_marlin"},
}
# The model catalog's spellings of a checkpoint's method -> the quant_method vLLM reads.
CHECKPOINT_METHOD: dict[str | None, str | None] = {
    "fp8_e4m3": "fp8", "compressed-tensors-fp8": "compressed-tensors", "gptq-int4": "gptq",
}
# Methods with rules of their own (FP8 weights: precision.py).
OWN_RULES = frozenset({"fp8"})


def checkpoint_method(ctx: Context) -> str | None:
    method = ctx.model.quantization
    return CHECKPOINT_METHOD.get(method, method)


def effective_method(ctx: Context) -> str | None:
    """The method vLLM runs: the forced one (an alias resolved), else the checkpoint's."""
    forced = ctx.engine.quantization
    if forced is None:
        return checkpoint_method(ctx)
    return ACCEPTS.get(checkpoint_method(ctx), {}).get(forced, forced)


def _known(ctx: Context, method: str) -> bool:
    return method in ctx.release.quantization_methods


def _valid(ctx: Context) -> str:
    methods = ctx.release.quantization_methods.values()
    return ", ".join(sorted(m.name for m in methods if not m.deprecated and m.min_capability is not None))


def _unknown(ctx: Context) -> Facts | None:
    forced = ctx.engine.quantization
    if forced is None or _known(ctx, forced) or forced in ACCEPTS.get(checkpoint_method(ctx), {}):
        return None
    return {"method": forced, "version": ctx.release.tag, "valid": _valid(ctx)}


def _mismatch(ctx: Context) -> Facts | None:
    forced = ctx.engine.quantization
    checkpoint = checkpoint_method(ctx)
    if forced is None or not _known(ctx, forced) or forced == checkpoint:
        return None
    if checkpoint is None:
        if forced in ON_THE_FLY:
            return None
        return {"method": forced, "checkpoint": "16-bit (unquantized)",
                "fix": f"remove engine.quantization, use fp8 (quantized while loading), or a {forced} checkpoint"}
    if forced in ACCEPTS.get(checkpoint, {}):
        return None
    return {"method": forced, "checkpoint": checkpoint,
            "fix": f"remove engine.quantization: vLLM reads {checkpoint} from the checkpoint"}


def _method(ctx: Context) -> QuantizationMethod | None:
    """The release's entry for the method vLLM runs; None without one."""
    method = effective_method(ctx)
    return ctx.release.quantization_methods.get(method) if method else None


def _deprecated(ctx: Context) -> Facts | None:
    found = _method(ctx)
    if found is None or not found.deprecated or ctx.extra_switch("--allow-deprecated-quantization"):
        return None
    return {KEY: ctx.quantization_key, "method": found.name, "version": ctx.release.tag}


def _cc(ctx: Context) -> Facts | None:
    found = _method(ctx)
    if found is None or found.min_capability is None or found.name in OWN_RULES:
        return None
    major, minor = ctx.gpu.compute_capability
    if major * 10 + minor < found.min_capability:
        need = f"{found.min_capability // 10}.{found.min_capability % 10}"
        return {KEY: ctx.quantization_key, "method": found.name, "need": need, "gpu": ctx.gpu.name,
                "cc": ctx.gpu.cc_text}
    return None


QUANT_SRC = "vllm/config/model.py ModelConfig._verify_quantization"

RULES: tuple[Rule, ...] = (
    Rule("quantization-unknown", Severity.ERROR, QUANT,
         "quantization {method} is not a method vLLM {version} knows",
         "set engine.quantization to one of {valid}, or remove it (vLLM reads the checkpoint's)",
         "A forced quantization method the release does not have (`marlin` only as an alias on "
         "GPTQ/AWQ checkpoints).",
         "vLLM exits: \"Unknown quantization method: ... Must be one of [...]\".",
         f"{QUANT_SRC}; vllm/model_executor/layers/quantization/__init__.py QUANTIZATION_METHODS", _unknown),
    Rule("quantization-checkpoint-mismatch", Severity.ERROR, QUANT,
         "quantization {method} does not match the {checkpoint} checkpoint",
         "{fix}",
         "A forced method that is not the checkpoint's (or its Marlin variant); on a 16-bit "
         "checkpoint only fp8 and bitsandbytes quantize while loading.",
         "vLLM exits: \"Quantization method specified in the model config (...) does not match\", or "
         "\"Cannot find the config file for ...\" for a 16-bit checkpoint.",
         f"{QUANT_SRC}; vllm/model_executor/model_loader/weight_utils.py get_quant_config", _mismatch),
    Rule("quantization-deprecated", Severity.ERROR, QUANT,
         "quantization {method} is deprecated in vLLM {version}",
         "use another method, or add --allow-deprecated-quantization to engine.extraArgs",
         "A deprecated method (fbgemm_fp8, fp_quant, experts_int8, petit_nvfp4) without "
         "--allow-deprecated-quantization.",
         "vLLM exits: \"The quantization method ... is deprecated and will be removed\".",
         f"{QUANT_SRC}; vllm/model_executor/layers/quantization/__init__.py DEPRECATED_QUANTIZATION_METHODS",
         _deprecated),
    Rule("quantization-cc-too-low", Severity.ERROR, QUANT,
         "{method} kernels need compute capability {need}; {gpu} has {cc}",
         "use a GPTQ checkpoint (runs from CC 6.0) or a GPU with CC {need}+",
         "The release's minimum CC per method: AWQ, AWQ-Marlin, GPTQ-Marlin 7.5, GPTQ 6.0 (keyed on "
         "model.name when the checkpoint brings the method).",
         "vLLM exits: \"The quantization method ... is not supported for the current GPU. Minimum capability\".",
         "vllm/config/vllm.py VllmConfig._get_quantization_config; get_min_capability in "
         "vllm/model_executor/layers/quantization/awq_marlin.py, gptq_marlin.py, awq.py, gptq.py", _cc),
)
