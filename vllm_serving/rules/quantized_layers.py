"""What a quantized checkpoint's layers need once vLLM builds them: the GPU a compressed-tensors
scheme runs on, and FP8 blocks that the tensor-parallel split leaves whole.

- compressed-tensors: `CompressedTensorsConfig` accepts any GPU from 7.0, but `get_scheme` picks
  a scheme per config group (`_get_scheme_from_parts`) and refuses it below the scheme's own
  minimum ("Quantization scheme is not supported for the current GPU. Min capability: 75"). The
  minimum per scheme class is the release's (`compressed_tensors_schemes` in the registry); which
  class a group's weights and activations select is the table below, from v0.19.1's
  `_get_scheme_from_parts` (an FP8 W8A8 group falls back to weight-only W8A16 below 8.9).
- FP8 blocks: `validate_fp8_block_shape` (quantization/utils/fp8_utils.py) runs on every
  block-quantized linear layer: a row-parallel layer's input shard is whole blocks of block_k
  (o_proj, and the MLP's down_proj in dense layers and shared experts). Its column-parallel check
  never trips on the decoder's column layers: qkv_proj and gate_up_proj are merged, and
  `ColumnParallelLinear._maybe_allow_fp8_block_shape_mismatch` (model_executor/layers/linear.py,
  every release from v0.17) skips the validation of a merged layer whose partitions are not whole
  blocks. The conditions are the release's.
- Routed FP8 experts: `Fp8MoEMethod.create_weights` checks each rank's share of an expert
  against the block, unless (v0.29+) `refine_fp8_moe_block_shape` gives it finer scale blocks.
"""

from __future__ import annotations

import math

import msgspec

from vllm_serving.catalog.models import QuantScheme
from vllm_serving.engine import release_facts
from vllm_serving.engine.expressions import MissingInput, Unsupported, evaluate
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import KEY, Context, Facts, Rule
from vllm_serving.rules.quantization import effective_method

CT = "compressed-tensors"
_W = "CompressedTensors"
# (weights type, weights bits, activations type, activations bits, group size or None for any)
# -> the scheme classes `_get_scheme_from_parts` tries, the first the GPU runs being used
# (vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py, v0.19.1).
SCHEME_CLASSES: tuple[tuple[tuple[str, int, str | None, int | None, int | None], tuple[str, ...]], ...] = (
    (("float", 4, None, None, 32), (f"{_W}W4A16Mxfp4",)),  # _is_mxfp4: group 32
    (("float", 4, None, None, None), (f"{_W}W4A16Fp4",)),  # NVFP4 weights, no activations
    (("float", 4, "float", 4, None), (f"{_W}W4A4Fp4",)),
    (("int", 4, "float", 8, None), (f"{_W}W4A8Fp8",)),  # _is_fp8_w4a8_sm90
    (("int", 4, None, None, None), (f"{_W}WNA16",)),  # _is_wNa16_group_channel
    (("int", 8, None, None, None), (f"{_W}WNA16",)),
    (("float", 8, "float", 8, None), (f"{_W}W8A8Fp8", f"{_W}W8A16Fp8")),  # W8A16 below 8.9
    (("float", 8, None, None, None), (f"{_W}W8A16Fp8",)),
    (("int", 8, "int", 8, None), (f"{_W}W8A8Int8",)),
    (("int", 4, "int", 8, None), (f"{_W}W4A8Int",)),
)


def scheme_classes(scheme: QuantScheme) -> tuple[str, ...] | None:
    for (wtype, wbits, atype, abits, group), classes in SCHEME_CLASSES:
        if (wtype, wbits, atype, abits) == (scheme.weights_type, scheme.weights_bits, scheme.activations_type,
                                            scheme.activations_bits) and group in (None, scheme.group_size):
            return classes
    return None


def _shown(scheme: QuantScheme) -> str:
    acts = f"{scheme.activations_type}{scheme.activations_bits}" if scheme.activations_type else "none"
    return f"{scheme.weights_type}{scheme.weights_bits} weights, activations {acts}"


def _scheme_cc(ctx: Context) -> Facts | None:
    config = ctx.model.quantization_config
    minimums = release_facts.quantization(ctx.release).scheme_min_capability
    if effective_method(ctx) != CT or config is None or not minimums or not ctx.settings.hardware.uses_gpus:
        return None
    major, minor = ctx.gpu.compute_capability
    for scheme in config.schemes:
        classes = scheme_classes(scheme)
        needs = [minimums.get(c) for c in classes or ()]
        if not needs or any(n is None for n in needs):
            continue  # a scheme the table or the release does not name: not decided
        need = min(n for n in needs if n is not None)
        if major * 10 + minor < need:
            return {KEY: ctx.quantization_key, "scheme": _shown(scheme), "classes": " or ".join(classes or ()),
                    "need": f"{need // 10}.{need % 10}", "gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text,
                    "version": ctx.release.tag}
    return None


def _row_layers(ctx: Context) -> list[tuple[str, int]]:
    """(name, full input size) of the decoder's row-parallel linear layers."""
    model = ctx.model
    found = [("o_proj", model.num_attention_heads * model.head_dim)] if model.mla is None else []
    experts = model.experts
    if model.intermediate_size and (experts is None or experts.dense_layers):
        found.append(("mlp.down_proj", model.intermediate_size))
    if experts is not None and experts.shared_intermediate_size:
        found.append(("shared_expert.down_proj", experts.shared_intermediate_size))
    return found


def _linear_split(ctx: Context) -> Facts | None:
    config, tp = ctx.model.quantization_config, ctx.tp
    checks = release_facts.quantization(ctx.release).fp8_linear_row
    if effective_method(ctx) != "fp8" or config is None or config.weight_block_size is None or tp == 1 \
            or not checks:
        return None
    block_n, block_k = config.weight_block_size
    for name, size in _row_layers(ctx):
        if size % tp:
            continue  # not split evenly at all: the divisibility rules say so
        values = {"tp_size": tp, "input_size": size, "input_size_per_partition": size // tp, "block_k": block_k}
        for when, message in checks:
            try:
                tripped = evaluate(when, values)
            except (MissingInput, Unsupported, TypeError):
                continue
            if tripped:
                return {"layer": name, "tp": tp, "block": f"{block_n}x{block_k}",
                        "why": message.format(**values), "version": ctx.release.tag}
    return None


SCHEME_SRC = ("vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py "
              "CompressedTensorsConfig._get_scheme_from_parts, get_scheme, _check_scheme_supported; "
              "get_min_capability in vllm/model_executor/layers/quantization/compressed_tensors/schemes/*.py")

EXPERT_PARALLEL = "--enable-expert-parallel"


def moe_split(ctx: Context) -> int:
    """How many ranks share each expert's width (fused_moe/config.py `FusedMoEParallelConfig.make`):
    TP x DP flattened, or 1 with expert parallelism (whole experts per rank)."""
    world = ctx.tp * (ctx.engine.data_parallel_size or 1)
    return 1 if ctx.extra_switch(EXPERT_PARALLEL) is True and world > 1 else world


def _fp8_block_split(ctx: Context) -> Facts | None:
    """The release's `Fp8MoEMethod.create_weights` checks on each rank's share of an expert, and
    `FusedMoE`'s own assertion that the share is whole."""
    config, experts = ctx.model.quantization_config, ctx.model.experts
    facts_q = release_facts.quantization(ctx.release)
    checks = facts_q.fp8_moe_checks
    if effective_method(ctx) != "fp8" or config is None or config.weight_block_size is None or experts is None \
            or experts.intermediate_size is None or not checks:
        return None
    width, split = experts.intermediate_size, moe_split(ctx)
    block_n, block_k = config.weight_block_size
    shard = _Shard(block_n, block_k, ctx.model.hidden_size, facts_q.fp8_moe_refine_min_block, checks)
    ok = ", ".join(str(n) for n in range(1, 65) if _split_ok(width, n, shard, ctx.tp)) or "none"
    facts = {"width": width, "split": split, "block": f"{block_n}x{block_k}", "ok": ok, "layout": _layout(ctx)}
    if width % split:
        return {**facts, "why": f"{width} does not divide by {split} (FusedMoE asserts it)"}
    per = width // split
    if shard.refined(per):
        return None
    for when, message in checks:
        if evaluate(when, {"intermediate_size_per_partition": per, "block_n": block_n, "block_k": block_k,
                           "tp_size": ctx.tp}):
            why = message.format(intermediate_size_per_partition=per, block_n=block_n, block_k=block_k)
            return {**facts, "why": why}
    return None


class _Shard(msgspec.Struct, frozen=True):
    block_n: int
    block_k: int
    hidden: int
    refine_min: int | None
    checks: tuple[tuple[str, str], ...]

    def refined(self, per: int) -> bool:
        """refine_fp8_moe_block_shape: finer scale blocks replace the checkpoint's (no raise)."""
        return self.refine_min is not None and math.gcd(self.block_n, self.block_k, per, self.hidden) >= self.refine_min


def _split_ok(width: int, split: int, shard: _Shard, tp: int) -> bool:
    if width % split:
        return False
    if shard.refined(width // split):
        return True
    values = {"intermediate_size_per_partition": width // split, "block_n": shard.block_n,
              "block_k": shard.block_k, "tp_size": tp}
    return not any(evaluate(when, values) for when, _ in shard.checks)


def _layout(ctx: Context) -> str:
    dp = ctx.engine.data_parallel_size or 1
    return f"TP {ctx.tp}" + (f" x DP {dp}" if dp > 1 else "")


RULES: tuple[Rule, ...] = (
    Rule("quantization-scheme-cc-too-low", Severity.ERROR, config_key("model", "name"),
         "the compressed-tensors scheme of this checkpoint ({scheme}: {classes}) needs compute capability "
         "{need} in vLLM {version}; {gpu} has {cc}",
         "serve it on a GPU of compute capability {need} or newer, or use a checkpoint quantized for this GPU "
         "(GPTQ runs from 6.0)",
         "A compressed-tensors checkpoint: each config group's scheme (picked by its weight and activation "
         "types) runs on the GPU (W8A16 FP8, W4A16 and int8 from 7.5, W8A8 FP8 from 8.9 else weight-only).",
         "vLLM exits while building the model: \"Quantization scheme is not supported for the current GPU. "
         "Min capability: 75\".", SCHEME_SRC, _scheme_cc),
    Rule("fp8-block-linear-split", Severity.ERROR, config_key("engine", "tensorParallelSize"),
         "TP {tp} splits {layer} of this FP8 checkpoint into shards that are not whole {block} blocks: {why}",
         "use a tensor-parallel size that leaves every layer's shard a multiple of the block (a smaller one), "
         "and pipeline parallelism for more GPUs",
         "FP8 block-quantized row-parallel layers (o_proj, down_proj of dense MLPs and shared experts): each "
         "tensor-parallel shard of the input is whole blocks (the release's validate_fp8_block_shape).",
         "vLLM exits while building the model: \"Weight input_size_per_partition = 1216 is not divisible by "
         "weight quantization block_k = 128\".",
         "vllm/model_executor/layers/quantization/utils/fp8_utils.py validate_fp8_block_shape; "
         "vllm/model_executor/layers/quantization/fp8.py Fp8LinearMethod.create_weights; "
         "vllm/model_executor/layers/linear.py ColumnParallelLinear._maybe_allow_fp8_block_shape_mismatch",
         _linear_split),
    Rule("fp8-block-moe-split", Severity.ERROR, config_key("engine", "tensorParallelSize"),
         "{layout} splits each expert's {width}-wide FP8 weights {split} ways, against {block} blocks: {why}",
         "add --enable-expert-parallel to engine.extraArgs (whole experts per GPU), or split experts over one of "
         "these TP x DP sizes: {ok}",
         "FP8 block-quantized MoE experts: each rank's share of an expert (width / (TP x DP) without expert "
         "parallelism) is whole and a multiple of the block; from v0.29 a share whose gcd with the block and the "
         "hidden size is >= 32 gets finer scale blocks instead.",
         "vLLM exits while building the model: \"The output_size of gate's and up's weight = 192 is not "
         "divisible by weight quantization block_n = 128\".",
         "vllm/model_executor/layers/quantization/fp8.py Fp8MoEMethod.create_weights; "
         "vllm/model_executor/layers/fused_moe/oracle/fp8.py refine_fp8_moe_block_shape (v0.29+); "
         "vllm/model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make; "
         "vllm/model_executor/layers/fused_moe/layer.py FusedMoE.__init__", _fp8_block_split),
)
