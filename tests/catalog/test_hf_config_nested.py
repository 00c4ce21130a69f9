"""A multimodal config.json nests its language model under `text_config` and leaves out what the
config class fills in: the facts read from the right level, with transformers' defaults and the
layer pattern vLLM builds (published configs in tests/fixtures/hf, numbers worked out by hand)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.paths import FIXTURES
from vllm_serving.catalog.checkpoint import element_counts
from vllm_serving.catalog.hf_config import parse_hf_config

HF = FIXTURES / "hf"


def _published(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HF / name).read_text(encoding="utf-8"))
    return data


GEMMA3_4B = "gemma-3-4b-it.config.json"
QWEN35 = "qwen3.5-27b.config.json"


def test_gemma3_text_keys_the_file_leaves_out_are_the_config_classs() -> None:
    """gemma-3-4b-it's text_config gives 6 keys; transformers' Gemma3TextConfig supplies the rest
    (vocab_size 262208, max_position_embeddings 131072, 8 heads, 4 KV heads, head_dim 256,
    tie_word_embeddings true)."""
    model = parse_hf_config(_published(GEMMA3_4B), "config.json")
    assert (model.vocab_size, model.max_position_embeddings) == (262208, 131072)
    assert (model.num_attention_heads, model.num_key_value_heads, model.head_dim) == (8, 4, 256)
    assert model.tie_word_embeddings
    assert element_counts(model)["lm_head"] == 0  # the head is the embedding: loaded once


def test_a_text_config_without_its_model_type_gets_the_top_level_classs_defaults() -> None:
    """transformers' Gemma3Config builds a dict text_config as Gemma3TextConfig(**text_config)
    whether or not it names its model_type (configuration_gemma3.py): the keys it leaves out are
    that class's (vocab_size 262208, 8 heads of 256, 4 KV heads, tied embeddings)."""
    config = _published(GEMMA3_4B)
    del config["text_config"]["model_type"]
    model = parse_hf_config(config, "config.json")
    assert (model.vocab_size, model.num_attention_heads, model.num_key_value_heads, model.head_dim) == (
        262208, 8, 4, 256)
    assert model.tie_word_embeddings


def test_every_sixth_gemma3_layer_is_global_the_rest_slide() -> None:
    """Gemma3TextConfig: layer i slides unless (i + 1) % sliding_window_pattern == 0 (pattern 6).
    34 layers: 6, 12, 18, 24, 30 global, 29 sliding over 1024 tokens; gemma-3-1b-it's 26 layers:
    4 global, 22 sliding over 512."""
    four_b = parse_hf_config(_published(GEMMA3_4B), "config.json")
    assert (four_b.sliding_window, four_b.sliding_window_layers, four_b.full_attention_layers) == (1024, 29, 34)
    one_b = parse_hf_config(_published("gemma-3-1b-it.config.json"), "config.json")
    assert (one_b.sliding_window, one_b.sliding_window_layers) == (512, 22)


def test_a_window_the_config_switches_off_limits_no_layer() -> None:
    """Qwen2-57B-A14B states sliding_window 131072 with use_sliding_window false: every layer
    attends to the whole context (KV for all of it)."""
    model = parse_hf_config(_published("qwen2-57b-a14b.config.json"), "config.json")
    assert (model.sliding_window, model.sliding_window_layers) == (None, 0)


def test_the_language_models_own_model_type_is_kept() -> None:
    """vLLM's hf_text_config checks read text_config.model_type (gemma3_text in a gemma3 checkpoint)."""
    gemma = parse_hf_config(_published(GEMMA3_4B), "config.json")
    assert (gemma.model_type, gemma.text_model_type, gemma.language_model_type) == ("gemma3", "gemma3_text",
                                                                                     "gemma3_text")
    qwen = parse_hf_config(_published(QWEN35), "config.json")
    assert (qwen.model_type, qwen.text_model_type) == ("qwen3_5", "qwen3_5_text")
    text_only = parse_hf_config(_published("gemma-3-1b-it.config.json"), "config.json")
    assert (text_only.text_model_type, text_only.language_model_type) == (None, "gemma3_text")


def test_tied_embeddings_stated_only_under_text_config_are_read_there() -> None:
    """vLLM reads hf_text_config.tie_word_embeddings (model_executor/models/qwen3_5.py)."""
    config = _published(QWEN35)
    del config["tie_word_embeddings"]
    config["text_config"]["tie_word_embeddings"] = True
    assert parse_hf_config(config, "config.json").tie_word_embeddings


@pytest.mark.parametrize(("text", "top", "dtype"), [
    ({}, {}, "bfloat16"),  # Qwen3.5's own: text_config "dtype"
    ({"dtype": "float16"}, {"torch_dtype": "float32"}, "float16"),  # the language model's wins
    ({"dtype": None, "torch_dtype": "float32"}, {}, "float32"),  # older transformers' name
    ({"dtype": None}, {"dtype": "float16"}, "float16"),  # only the top level states it
    ({"dtype": None}, {"torch_dtype": "float32"}, "float32"),
    ({"dtype": None}, {}, "bfloat16"),  # nowhere: what the published checkpoints are
    ({"dtype": "half"}, {}, "float16"),  # torch's aliases
    ({"dtype": "float"}, {}, "float32"),
    ({"dtype": "float8_e4m3fn"}, {}, "bfloat16"),  # a name the table lacks: planned as 16-bit, not refused
])
def test_the_checkpoint_dtype_is_read_where_transformers_writes_it(
        text: dict[str, Any], top: dict[str, Any], dtype: str) -> None:
    config = _published(QWEN35)
    config["text_config"].update(text)
    config.update(top)
    assert parse_hf_config(config, "config.json").weights_dtype == dtype


def test_gemma3_vision_tower_by_hand() -> None:
    """SigLIP: 27 blocks of 1152 (qkv + out 4 x 1152^2, fc1 + fc2 2 x 1152 x 4304, norms and
    biases), a 14 x 14 patch embedding, 64 x 64 positions, then one 1152 -> 2560 projection:
    0.42 B, the published 4.30 B less the language model's 3.88 B."""
    by_hand = 27 * (4 * 1152**2 + 2 * 1152 * 4304 + 4 * 1152 + 2 * 4304) + 3 * 14 * 14 * 1152 \
        + 64 * 64 * 1152 + 1152 * 2560
    model = parse_hf_config(_published(GEMMA3_4B), "config.json")
    assert model.vision_params_billion == pytest.approx(by_hand / 1e9, abs=0.001)
    assert by_hand / 1e9 == pytest.approx(4.30 - 3.88, abs=0.005)


def test_rope_parameters_as_newer_transformers_write_them_are_read_as_rope_scaling() -> None:
    """transformers 5 writes rope_scaling as rope_parameters, per layer type where layers differ
    (Gemma 3: a linear factor 8 on the global layers); vLLM's patch_rope_parameters reads both."""
    config = _published(GEMMA3_4B)
    config["text_config"]["rope_parameters"] = {
        "full_attention": config["text_config"].pop("rope_scaling") | {"rope_theta": 1000000},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000}}
    scalings = parse_hf_config(config, "config.json").rope_scaling
    assert [(s.rope_type, s.factor) for s in scalings] == [("linear", 8.0)]


def test_a_quantization_config_at_the_top_of_a_nested_config_is_read() -> None:
    """Qwen's FP8 multimodal checkpoints and NVIDIA's NVFP4 ones put quantization_config beside
    text_config, not in it (nvidia/Qwen3.6-27B-NVFP4's published config.json)."""
    config = json.loads((FIXTURES.parent / "catalog" / "configs" / "nvidia--Qwen3.6-27B-NVFP4.config.json")
                        .read_text(encoding="utf-8"))
    assert "quantization_config" not in config["text_config"]
    assert parse_hf_config(config, "config.json").quantization == "modelopt"


def test_qwen2_vl_rope_scaling_with_mrope_sections_is_multimodal_rope() -> None:
    """Qwen2-VL-7B-Instruct gives its mrope_section under rope_scaling (no rope_parameters): vLLM's
    MRotaryEmbedding, whose cos/sin cache is four times max_position_embeddings."""
    model = parse_hf_config(_published("qwen2-vl-7b-instruct.config.json"), "config.json")
    assert model.multimodal_rope
    assert not parse_hf_config(_published("qwen3-4b.config.json"), "config.json").multimodal_rope


def test_a_legacy_rope_type_is_read_as_vllm_renames_it() -> None:
    # vllm/transformers_utils/config.py patch_rope_parameters_dict (v0.19.1): `type` read as
    # `rope_type`, the legacy "su" as "longrope", the legacy "mrope" as "default"
    from vllm_serving.catalog.hf_config_fields import rope_scalings  # noqa: PLC0415

    (named,) = rope_scalings({"rope_scaling": {"type": "su", "factor": 4.0}})
    assert (named.rope_type, named.factor) == ("longrope", 4.0)
    (mrope,) = rope_scalings({"rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24], "factor": 2.0}})
    assert mrope.rope_type == "default"
    yarn_entry = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    (yarn,) = rope_scalings({"rope_scaling": yarn_entry})
    assert (yarn.rope_type, yarn.original_max_position_embeddings) == ("yarn", 32768)
