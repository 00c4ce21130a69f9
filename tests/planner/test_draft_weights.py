"""The weights an MTP draft adds on each GPU, against hand arithmetic from the published config.json.

vLLM's MTP drafter loads the checkpoint's MTP layer(s) beside the target - one decoder layer, the
`fc` joining the embedding and the hidden state (2h x h) and its norms - and shares the target's
embedding and lm_head (v1/spec_decode/eagle.py `_maybe_share_embeddings` / `_maybe_share_lm_head`).
A user reads this as the "speculative draft" part of the weights in `vllm-stack capacity`.
"""

from __future__ import annotations

import pytest

from vllm_serving.catalog.models import MODELS
from vllm_serving.planner.memory_budget import draft_weights_gib

GIB = 2**30

# Qwen3.6-27B config.json (huggingface.co/Qwen/Qwen3.6-27B): hidden 5120, 24 query heads with the
# output gate (q_proj twice as wide), 4 KV heads, head_dim 256, intermediate 17408. Its MTP layer
# is a full-attention layer:
QWEN36_MTP_ELEMENTS = (
    5120 * 24 * 256 * 2     # q_proj with the gate half
    + 2 * 5120 * 4 * 256    # k_proj, v_proj
    + 24 * 256 * 5120       # o_proj
    + 3 * 5120 * 17408      # gate, up, down
    + 2 * 5120 * 5120       # fc
)  # = 424,673,280
# Llama-3.1-8B config.json: hidden 4096, 32 heads, 8 KV heads, head_dim 128, intermediate 14336,
# 32 layers. One average decoder layer (its two RMSNorms, and a 32nd of the final norm) + the fc:
LLAMA_LAYER_AND_FC_ELEMENTS = (
    4096 * 4096 * 2          # q_proj, o_proj
    + 2 * 4096 * 1024        # k_proj, v_proj
    + 3 * 4096 * 14336       # gate, up, down
    + 2 * 4096 + 4096 // 32  # norms
    + 2 * 4096 * 4096        # fc
)  # = 251,666,560


def test_no_draft_adds_nothing() -> None:
    assert draft_weights_gib(MODELS["Qwen3.6-27B"], 0, 2, 1) == 0.0


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_an_mtp_layer_of_a_16_bit_checkpoint_is_split_by_tp(tp: int) -> None:
    expected = QWEN36_MTP_ELEMENTS * 2 / tp / GIB  # 0.791 GiB at TP 1
    assert draft_weights_gib(MODELS["Qwen3.6-27B"], 1, 2, tp) == pytest.approx(expected, rel=1e-3)


def test_two_draft_layers_load_twice_the_weights() -> None:
    """num_speculative_tokens above the model's MTP layers reuses them; a model with two MTP layers
    (or a stack that asks for two) loads two."""
    assert draft_weights_gib(MODELS["Qwen3.6-27B"], 2, 2, 1) == pytest.approx(
        2 * QWEN36_MTP_ELEMENTS * 2 / GIB, rel=1e-3)


def test_an_fp8_checkpoint_keeps_its_mtp_layer_in_fp8() -> None:
    """Qwen3.6-27B-FP8 stores the MTP layer's projections in FP8 (one byte each): half the 16-bit
    figure, whatever the compute dtype (the quantized bytes are not cast)."""
    expected = QWEN36_MTP_ELEMENTS * 1 / 4 / GIB  # TP 4: 0.0989 GiB
    assert draft_weights_gib(MODELS["Qwen3.6-27B-FP8"], 1, 2, 4) == pytest.approx(expected, rel=2e-3)
    assert draft_weights_gib(MODELS["Qwen3.6-27B-FP8"], 1, 4, 4) == pytest.approx(expected, rel=2e-3)


def test_each_draft_layer_is_one_of_the_checkpoint_mtp_layers() -> None:
    """A checkpoint with two MTP layers (num_nextn_predict_layers: 2) holds two layers' tensors; a
    draft that runs one of them loads one layer's worth."""
    two = MODELS["Qwen3.6-27B"].model_copy(update={"mtp_layers": 2})
    assert draft_weights_gib(two, 1, 2, 1) == pytest.approx(QWEN36_MTP_ELEMENTS * 2 / GIB, rel=1e-3)
    assert draft_weights_gib(two, 2, 2, 1) == pytest.approx(2 * QWEN36_MTP_ELEMENTS * 2 / GIB, rel=1e-3)


def test_a_float32_checkpoint_loads_its_draft_in_the_compute_dtype() -> None:
    """vLLM casts a float32 checkpoint to the served dtype while loading: bfloat16 serving holds
    2 bytes per element, float32 serving 4."""
    float32 = MODELS["Qwen3.6-27B"].model_copy(update={"weights_dtype": "float32"})
    assert draft_weights_gib(float32, 1, 2, 1) == pytest.approx(QWEN36_MTP_ELEMENTS * 2 / GIB, rel=1e-3)
    assert draft_weights_gib(float32, 1, 4, 1) == pytest.approx(QWEN36_MTP_ELEMENTS * 4 / GIB, rel=1e-3)
    bf16 = MODELS["Qwen3.6-27B"]
    assert draft_weights_gib(bf16, 1, 4, 1) == pytest.approx(QWEN36_MTP_ELEMENTS * 4 / GIB, rel=1e-3)


@pytest.mark.parametrize("tp", [1, 4])
def test_a_draft_without_mtp_tensors_counts_one_average_decoder_layer_and_the_fc(tp: int) -> None:
    """Llama-3.1-8B has no MTP layer in its checkpoint: a draft layer asked for is estimated as one
    of its decoder layers plus the 2h x h fc, 16-bit."""
    expected = LLAMA_LAYER_AND_FC_ELEMENTS * 2 / tp / GIB  # 0.469 GiB at TP 1
    assert draft_weights_gib(MODELS["Llama-3.1-8B"], 1, 2, tp) == pytest.approx(expected, rel=1e-4)


def test_a_draft_without_mtp_tensors_leaves_the_vision_tower_out() -> None:
    """Mistral-Small-3.1-24B (text: hidden 5120, 32 heads, 8 KV heads, head_dim 128, intermediate
    32768, 40 layers) carries a 0.43B vision tower: it is no part of a decoder layer."""
    layer = 5120 * 4096 * 2 + 2 * 5120 * 1024 + 3 * 5120 * 32768 + 2 * 5120 + 5120 // 40
    expected = (layer + 2 * 5120 * 5120) * 2 / GIB
    assert draft_weights_gib(MODELS["Mistral-Small-3.1-24B-Instruct-2503"], 1, 2, 1) == pytest.approx(
        expected, rel=1e-3)
