"""Quantization: the method exists in the image's release, fits the checkpoint, and the GPU runs it.

vLLM reads the checkpoint's method from its config.json (`quantization_config.quant_method`);
`--quantization` (engine.quantization) forces one, which must then agree with the checkpoint
(config/model.py `ModelConfig._verify_quantization`). A GPTQ/AWQ checkpoint runs as its Marlin
variant where Marlin takes it (the override probed in the release's `override_order`: compute
capability, bits, group size and zero points as marlin_utils.py states them). The method found
then sets the GPU minimum and the compute dtypes (`get_supported_act_dtypes`), and FP8 block
quantization its own split rule for MoE experts.
"""

from __future__ import annotations

from vllm_serving.engine import release_facts
from vllm_serving.engine.expressions import Capability, MissingInput, Unsupported, evaluate
from vllm_serving.engine.release_records import QuantizationMethod
from vllm_serving.engine.release_registry import known_versions, load
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


def marlin_converts(ctx: Context, marlin: str) -> bool:
    """`AWQMarlinConfig`/`GPTQMarlinConfig.override_quantization_method`'s `can_convert` on this GPU:
    the release probes the method, Marlin runs on the GPU (`query_marlin_supported_quant_types`),
    and the checkpoint's bits, group size and (AWQ) zero points are ones Marlin takes. Facts the
    checkpoint does not state count as the common ones (4 bits, a supported group, zero points)."""
    facts = release_facts.quantization(ctx.release)
    if facts.override_order is None or marlin not in facts.override_order:
        return False
    major, minor = ctx.gpu.compute_capability
    if facts.marlin_min_capability is None or major * 10 + minor < facts.marlin_min_capability:
        return False
    config = ctx.model.quantization_config
    if config is None:  # a catalog entry: the common checkpoint (4 bits, group 128, zero points / sym)
        return True
    # is_awq_marlin_compatible / is_gptq_marlin_compatible: every fact stated, a TYPE_MAP key,
    # a Marlin group size; AWQ's kernels keep zero points (the has_zp types)
    keys = facts.type_map.get(marlin, ())
    groups = facts.marlin_group_sizes
    if config.bits is None or config.group_size is None or (groups is not None and config.group_size not in groups):
        return False
    if marlin == "gptq_marlin":
        return config.symmetric is not None and config.desc_act is not None and (config.bits, config.symmetric) in keys
    return config.zero_point is True and config.bits in keys


def effective_method(ctx: Context) -> str | None:
    """The method vLLM runs: a GPTQ/AWQ checkpoint's Marlin variant where it converts (unforced,
    or forced `marlin` / the variant), else the forced one (an alias resolved), else the checkpoint's."""
    forced = ctx.engine.quantization
    checkpoint = checkpoint_method(ctx)
    marlin = ACCEPTS.get(checkpoint, {}).get("marlin")
    if marlin is not None and forced in (None, "marlin", marlin) and marlin_converts(ctx, marlin):
        return marlin
    if forced is None:
        return checkpoint
    return ACCEPTS.get(checkpoint, {}).get(forced, forced)


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


def _last_reader(ctx: Context, method: str) -> str | None:
    """The newest earlier release whose registry lists `method`: proof that vLLM dropped it.
    A name no release listed is left alone (an override may claim it: INC reads auto-round)."""
    mine = tuple(int(p) for p in ctx.release.version.split("."))
    older = [v for v in known_versions() if tuple(int(p) for p in v.split(".")) < mine]
    return next((v for v in reversed(older) if method in load(v).quantization_methods), None)


def _checkpoint_dropped(ctx: Context) -> Facts | None:
    """`_verify_quantization`: a checkpoint method no override claims must be in the release's
    QUANTIZATION_METHODS (v0.34 has no bitsandbytes)."""
    checkpoint = checkpoint_method(ctx)
    if checkpoint is None or ctx.engine.quantization is not None or _known(ctx, checkpoint):
        return None
    last = _last_reader(ctx, checkpoint)
    if last is None:
        return None
    return {"method": checkpoint, "version": ctx.release.tag, "last": last,
            "valid": _valid(ctx)}


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


def _below_minimum(ctx: Context, found: QuantizationMethod) -> bool:
    major, minor = ctx.gpu.compute_capability
    return found.min_capability is not None and major * 10 + minor < found.min_capability


def _act_dtype(ctx: Context) -> Facts | None:
    """`VllmConfig._get_quantization_config`: after the GPU minimum, the compute dtype must be one
    the method's kernels take (mxfp4 bfloat16 only, plain AWQ/GPTQ float16 only, FP8 no float32)."""
    found = _method(ctx)
    if found is None or not ctx.settings.hardware.uses_gpus or _below_minimum(ctx, found):
        return None
    text = release_facts.quantization(ctx.release).act_dtypes.get(found.name)
    if text is None:
        return None
    try:
        allowed = evaluate(text, {"device_capability": Capability(*ctx.gpu.compute_capability)})
    except (MissingInput, Unsupported):
        return None
    if ctx.compute_dtype in allowed:
        return None
    settings = {"float16": "half", "bfloat16": "bfloat16", "float32": "float32"}
    usable = [settings.get(d, d) for d in allowed if d != "bfloat16" or ctx.gpu.supports_bf16]
    return {"method": found.name, "dtype": ctx.compute_dtype, "allowed": ", ".join(allowed),
            "fix": f"set engine.dtype to {' or '.join(usable)}" if usable else "use a GPU with bfloat16 (CC 8.0+)",
            "version": ctx.release.tag}


QUANT_SRC = "vllm/config/model.py ModelConfig._verify_quantization"

RULES: tuple[Rule, ...] = (
    Rule("quantization-unknown", Severity.ERROR, QUANT,
         "quantization {method} is not a method vLLM {version} knows",
         "set engine.quantization to one of {valid}, or remove it (vLLM reads the checkpoint's)",
         "A forced quantization method the release does not have (`marlin` only as an alias on "
         "GPTQ/AWQ checkpoints).",
         "vLLM exits: \"Unknown quantization method: ... Must be one of [...]\".",
         f"{QUANT_SRC}; vllm/model_executor/layers/quantization/__init__.py QUANTIZATION_METHODS", _unknown),
    Rule("quantization-checkpoint-dropped", Severity.ERROR, config_key("image", "tag"),
         "the checkpoint's quantization {method} is not a method vLLM {version} knows (v{last} was the "
         "last release to read it)",
         "pin image.tag v{last} or older, or serve a checkpoint quantized as one of {valid}",
         "vLLM dropped the method the checkpoint's config.json names (quantization_config.quant_method).",
         "vLLM exits: \"Unknown quantization method: ... Must be one of [...]\".",
         f"{QUANT_SRC}; vllm/model_executor/layers/quantization/__init__.py QUANTIZATION_METHODS", _checkpoint_dropped),
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
    Rule("quantization-dtype-unsupported", Severity.ERROR, config_key("engine", "dtype"),
         "{method} runs its kernels in {allowed}, not {dtype} (vLLM {version})",
         "{fix}",
         "The compute dtype is one the quantization method takes (the release's get_supported_act_dtypes: "
         "mxfp4 bfloat16 only, plain AWQ/GPTQ float16 only, FP8 no float32).",
         "vLLM exits: \"torch.float16 is not supported for quantization method mxfp4. Supported dtypes: [...]\".",
         "vllm/config/vllm.py VllmConfig._get_quantization_config; get_supported_act_dtypes in "
         "vllm/model_executor/layers/quantization/*.py", _act_dtype),
    Rule("quantization-cc-too-low", Severity.ERROR, QUANT,
         "{method} kernels need compute capability {need}; {gpu} has {cc}",
         "use a GPTQ checkpoint (runs from CC 6.0) or a GPU with CC {need}+",
         "The release's minimum CC per method: AWQ, AWQ-Marlin, GPTQ-Marlin 7.5, GPTQ 6.0 (keyed on "
         "model.name when the checkpoint brings the method).",
         "vLLM exits: \"The quantization method ... is not supported for the current GPU. Minimum capability\".",
         "vllm/config/vllm.py VllmConfig._get_quantization_config; get_min_capability in "
         "vllm/model_executor/layers/quantization/awq_marlin.py, gptq_marlin.py, awq.py, gptq.py", _cc),
)
