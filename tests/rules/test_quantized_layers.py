"""quantized_layers.py at its boundaries (vLLM v0.19.1's registry): a compressed-tensors scheme
against the GPU (`_get_scheme_from_parts`, each scheme's `get_min_capability`), and FP8 blocks
against the tensor-parallel split of the row-parallel layers (`validate_fp8_block_shape`) and of
the routed experts (`Fp8MoEMethod.create_weights`; v0.34.0's refinement)."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary
from vllm_serving.catalog.models import MODELS, CheckpointQuantization, QuantScheme
from vllm_serving.findings import config_key

QWEN3_8B = MODELS["Qwen3-8B"]
QWEN3_235_FP8 = {"name": "Qwen3-235B-A22B-FP8"}
QWEN3_30_FP8 = {"name": "Qwen3-30B-A3B-FP8"}
EP = ("--enable-expert-parallel",)
V0_34 = {"tag": "v0.34.0"}
# RedHatAI's *-FP8-dynamic (llm-compressor W8A8 FP8) and *-quantized.w4a16 config groups
W8A8_FP8 = QuantScheme(weights_type="float", weights_bits=8, activations_type="float", activations_bits=8)
W4A16 = QuantScheme(weights_type="int", weights_bits=4, group_size=128)
# Qwen/Qwen3-4B-FP8: intermediate 9728, blocks of 128 x 128
QWEN3_4B_FP8 = {"name": None, "architecture": MODELS["Qwen3-4B"].model_copy(update={
    "quantization": "fp8", "quantization_config": CheckpointQuantization(weight_block_size=(128, 128))})}


def compressed(*schemes: QuantScheme, gpu: str = "V100-32GB") -> dict[str, object]:
    return {"model": {"name": None, "architecture": QWEN3_8B.model_copy(update={
        "quantization": "compressed-tensors", "quantization_config": CheckpointQuantization(schemes=schemes)})},
        "hardware": {"gpu": gpu}, "engine": {"dtype": "float16"}}


def tp(size: int) -> dict[str, object]:
    return {"model": QWEN3_4B_FP8, "hardware": {"count": 8}, "engine": {"tensor_parallel_size": size}}

# Qwen/Qwen3-30B-A3B-FP8: every decoder layer a sparse MoE block (decoder_sparse_step 1, no
# mlp_only_layers: vllm/model_executor/models/qwen3_moe.py Qwen3MoeDecoderLayer), so config.json's
# intermediate_size 6144 is never built as a down_proj; blocks of 128 x 128.
QWEN3_MOE_FP8 = MODELS["Qwen3-30B-A3B-FP8"]
ONE_DENSE_LAYER = QWEN3_MOE_FP8.model_copy(update={
    "experts": QWEN3_MOE_FP8.experts.model_copy(update={"dense_layers": 1}) if QWEN3_MOE_FP8.experts else None})


def moe_tp32(architecture: object) -> dict[str, object]:
    return {"model": {"name": None, "architecture": architecture}, "hardware": {"count": 32},
            "engine": {"tensor_parallel_size": 32}}


MODEL_KEY = config_key("model", "name")
BOUNDARIES = [
    Boundary("quantization-scheme-cc-too-low", "v100", compressed(W8A8_FP8), compressed(W8A8_FP8, gpu="T4"),
             "W8A8 FP8 (weight-only W8A16 below 8.9): V100 (7.0) -> T4 (7.5)", key=MODEL_KEY, says=("7.5",)),
    Boundary("quantization-scheme-cc-too-low", "v100", compressed(W4A16), compressed(W4A16, gpu="T4"),
             "W4A16 int (WNA16): V100 (7.0) -> T4 (7.5)", key=MODEL_KEY),
    Boundary("quantization-scheme-cc-too-low", "v100", compressed(W4A16, W8A8_FP8), compressed(),
             "any group needing 7.5 trips -> no config groups (undecided)", key=MODEL_KEY),
    Boundary("fp8-block-linear-split", "a100", tp(8), tp(4),
             "Qwen3-4B-FP8 down_proj 9728: TP 8 (1216 per rank) -> TP 4 (2432, 19 blocks)",
             says=("mlp.down_proj", "1216", "block_k = 128")),

    Boundary("fp8-block-moe-split", "a100", {"model": QWEN3_235_FP8, "engine": {"tensor_parallel_size": 8}},
             {"model": QWEN3_235_FP8, "engine": {"tensor_parallel_size": 4}},
             "Qwen3-235B-A22B-FP8: TP 8 (1536/8 = 192) -> TP 4 (384)", says=("192", "block_n = 128"),
             # the sizes that leave whole 128-wide blocks: 1536 = 12 x 128, so the divisors of 12
             fix="add --enable-expert-parallel to engine.extraArgs (whole experts per GPU), or split experts "
                 "over one of these TP x DP sizes: 1, 2, 3, 4, 6, 12"),
    Boundary("fp8-block-moe-split", "a100", {"model": QWEN3_235_FP8, "engine": {"tensor_parallel_size": 8}},
             {"model": QWEN3_235_FP8, "engine": {"tensor_parallel_size": 8, "extra_args": EP}},
             "TP 8: + --enable-expert-parallel (whole experts per GPU)"),
    Boundary("fp8-block-moe-split", "a100", {"model": QWEN3_235_FP8,
                                             "engine": {"tensor_parallel_size": 2, "data_parallel_size": 4}},
             {"model": QWEN3_235_FP8, "engine": {"tensor_parallel_size": 2, "data_parallel_size": 2}},
             "TP 2 x DP 4 without EP shares experts 8 ways -> DP 2", says=("TP 2 x DP 4",)),
    Boundary("fp8-block-moe-split", "a100", {"model": QWEN3_30_FP8, "engine": {"tensor_parallel_size": 4}},
             {"model": QWEN3_30_FP8, "engine": {"tensor_parallel_size": 4, "extra_args": ("-ep",)}},
             "Qwen3-30B-A3B-FP8 TP 4 (768/4 = 192): + -ep"),
    Boundary("fp8-block-moe-split", "a100",
             {"model": QWEN3_30_FP8, "image": V0_34, "hardware": {"count": 16}, "engine": {"tensor_parallel_size": 16}},
             {"model": QWEN3_30_FP8, "image": V0_34, "hardware": {"count": 16}, "engine": {"tensor_parallel_size": 8}},
             "v0.34.0 refines blocks: TP 16 (768/16 = 48, gcd 16 < 32) -> TP 8 (96: 32-wide blocks)", says=("48",)),
    Boundary("fp8-block-moe-split", "a100", {"model": QWEN3_30_FP8, "engine": {"tensor_parallel_size": 4}},
             {"model": QWEN3_30_FP8, "image": V0_34, "engine": {"tensor_parallel_size": 4}},
             "TP 4 (192): v0.19.1 raises -> v0.34.0 refines to 64-wide scale blocks"),
    # refine_fp8_moe_block_shape (v0.34.0 fused_moe/oracle/fp8.py) refines to gcd(block_n, block_k, share,
    # hidden_dim): a hidden size of 2064 (16 x 129) leaves gcd 16 < 32 for the 96-wide share of TP 8
    Boundary("fp8-block-moe-split", "a100",
             {"model": {"name": None, "architecture": QWEN3_MOE_FP8.model_copy(update={"hidden_size": 2064})},
              "image": V0_34, "engine": {"tensor_parallel_size": 8}},
             {"model": {"name": None, "architecture": QWEN3_MOE_FP8.model_copy(update={"hidden_size": 2048})},
              "image": V0_34, "engine": {"tensor_parallel_size": 8}},
             "v0.34.0 TP 8 (96 per rank): hidden 2064 (gcd 16) -> 2048 (gcd 32, refined)", says=("96",)),
    # TP 32: o_proj 4096 -> 128 per rank (1 block); a dense MLP's down_proj 6144 -> 192 (1.5 blocks).
    Boundary("fp8-block-linear-split", "a100", moe_tp32(ONE_DENSE_LAYER), moe_tp32(QWEN3_MOE_FP8),
             "Qwen3-30B-A3B-FP8 at TP 32: one dense MLP layer (down_proj 192 per rank) -> every layer MoE",
             says=("mlp.down_proj", "192", "block_k = 128")),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)
