"""Catalog entries without a config.json copy under tests/: their shapes as the published
config.json files state them, written out here by hand (a wrong layer count, KV-head count or
window changes every KV figure a plan reports)."""

from __future__ import annotations

import pytest

from vllm_serving.catalog.models import MODELS

# huggingface.co/<repo>/blob/main/config.json (text_config for the multimodal ones); Gemma 3's
# sliding layers as transformers' Gemma3TextConfig derives them (every 6th layer full).
PUBLISHED: dict[str, dict[str, int]] = {
    # Qwen/Qwen3-14B
    "Qwen3-14B": {"num_hidden_layers": 40, "hidden_size": 5120, "intermediate_size": 17408, "vocab_size": 151936,
                  "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128},
    # mistralai/Mistral-Small-3.1-24B-Instruct-2503, text_config
    "Mistral-Small-3.1-24B-Instruct-2503": {"num_hidden_layers": 40, "hidden_size": 5120, "intermediate_size": 32768,
                                            "vocab_size": 131072, "num_attention_heads": 32,
                                            "num_key_value_heads": 8, "head_dim": 128},
    # google/gemma-3-12b-it
    "gemma-3-12b-it": {"num_hidden_layers": 48, "num_key_value_heads": 8, "head_dim": 256, "sliding_window": 1024,
                       "sliding_window_layers": 48 - 48 // 6},
    # google/gemma-3-27b-it
    "gemma-3-27b-it": {"num_hidden_layers": 62, "num_key_value_heads": 16, "head_dim": 128, "sliding_window": 1024,
                       "sliding_window_layers": 62 - 62 // 6},
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_entry_states_the_published_shapes(name: str) -> None:
    entry = MODELS[name]
    assert {field: getattr(entry, field) for field in PUBLISHED[name]} == PUBLISHED[name]
