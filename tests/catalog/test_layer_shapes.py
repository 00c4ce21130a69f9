"""The parameter estimate a config.json without a parameter count is sized by, by hand on tiny shapes."""

from __future__ import annotations

from typing import Any

import pytest

from vllm_serving.catalog.layer_shapes import estimate_params

# tied embeddings, a dense MLP 20 wide: 100 x 10 embedding, 3 x 10 x 20 per layer's MLP
TINY: dict[str, Any] = {"hidden_size": 10, "vocab_size": 100, "intermediate_size": 20}


def test_head_dim_is_hidden_size_over_heads_rounded_down() -> None:
    """Without head_dim, vLLM takes hidden_size // num_attention_heads (llama.py, qwen3.py v0.19.1):
    10 wide over 3 heads is 3 dims a head, not 3.33."""
    text = TINY | {"num_attention_heads": 3}
    # q, k, v: 10 -> 3 heads x 3 dims each; o: 9 -> 10
    attention = 10 * 9 + 2 * 10 * 9 + 9 * 10
    assert estimate_params(text, 1, 0, True) * 1e9 == pytest.approx(100 * 10 + attention + 3 * 10 * 20)


def test_the_linear_attention_conv_kernel_defaults_to_four() -> None:
    """linear_conv_kernel_dim defaults to 4 (Qwen3_5TextConfig, vLLM's transformers_utils/configs/
    qwen3_5.py v0.19.1; transformers' Qwen3NextConfig likewise): the short conv holds 4 weights per
    channel of q, k and v (qwen3_next.py's conv1d)."""
    text = TINY | {"num_attention_heads": 2, "head_dim": 5, "linear_num_key_heads": 1, "linear_num_value_heads": 2,
                   "linear_key_head_dim": 2, "linear_value_head_dim": 3}
    attention = 10 * 10 + 2 * 10 * 10 + 10 * 10  # one full-attention layer, 2 heads x 5 dims
    conv_dim = 2 * 1 * 2 + 2 * 3  # q and k: 1 head x 2 dims each; v: 2 heads x 3 dims
    # in_proj_qkvz (q, k, v and the 6-wide gate z), in_proj_ba (2 per value head), out_proj
    deltanet = 10 * (conv_dim + 6) + 10 * 2 * 2 + 6 * 10
    expected = 100 * 10 + attention + deltanet + conv_dim * 4 + 2 * 3 * 10 * 20
    assert estimate_params(text, 1, 1, True) * 1e9 == pytest.approx(expected)
    assert estimate_params(text | {"linear_conv_kernel_dim": 2}, 1, 1, True) * 1e9 == pytest.approx(expected - 20)
