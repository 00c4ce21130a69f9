"""config.json as published -> ModelArchitecture: dense, hybrid with text_config, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.paths import ROOT
from vllm_serving.catalog.hf_config import load_hf_config, parse_hf_config
from vllm_serving.catalog.models import MODELS
from vllm_serving.findings import ConfigError

FIXTURES = ROOT / "tests" / "fixtures" / "hf"


def _json(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


def test_dense_qwen3_4b() -> None:
    model = load_hf_config(FIXTURES / "qwen3-4b.config.json")
    assert (model.architecture, model.model_type, model.family) == ("Qwen3ForCausalLM", "qwen3", "qwen3")
    assert (model.num_hidden_layers, model.full_attention_layers) == (36, 36)
    assert (model.num_attention_heads, model.num_key_value_heads, model.head_dim) == (32, 8, 128)
    assert model.linear_attention is None and model.mtp_layers == 0
    assert model.weights_dtype == "bfloat16" and model.quantization is None
    assert model.params_billion == pytest.approx(4.02, abs=0.05)  # tied embeddings


def test_hybrid_qwen3_5_matches_catalog() -> None:
    model = load_hf_config(FIXTURES / "qwen3.5-27b.config.json")
    catalog = MODELS["Qwen3.5-27B"]
    for field in ("architecture", "model_type", "family", "num_hidden_layers", "hidden_size",
                  "vocab_size", "max_position_embeddings", "num_attention_heads",
                  "num_key_value_heads", "head_dim", "full_attention_layers", "linear_attention",
                  "mtp_layers"):
        assert getattr(model, field) == getattr(catalog, field), field
    assert model.params_billion == pytest.approx(27, rel=0.05)


def test_full_attention_interval_without_layer_types() -> None:
    data = _json("qwen3.5-27b.config.json")
    del data["text_config"]["layer_types"]
    model = parse_hf_config(data, "config.json")
    assert model.full_attention_layers == 16
    assert model.linear_attention is not None and model.linear_attention.num_layers == 48


def test_top_level_config_quantization_and_dtype() -> None:
    data = _json("qwen3-4b.config.json")
    data["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    data["torch_dtype"] = "float16"
    model = parse_hf_config(data, "config.json")
    assert model.quantization == "fp8" and model.is_fp8
    assert model.weights_dtype == "float16"


@pytest.mark.parametrize(("model_type", "refused"), [
    ("gemma3_text", True), ("glm4", True), ("plamo2", True),
    # vLLM matches the model_type exactly: a name that merely starts like one runs in float16
    ("glm4_moe", False), ("gemma3n", False),
])
def test_refusing_fp16_matches_vllms_exact_list(model_type: str, refused: bool) -> None:
    data = _json("qwen3-4b.config.json") | {"model_type": model_type}
    assert parse_hf_config(data, "config.json").refuses_float16 is refused


def test_missing_key_is_a_finding() -> None:
    data = _json("qwen3-4b.config.json")
    del data["num_attention_heads"]
    with pytest.raises(ConfigError) as info:
        parse_hf_config(data, "x/config.json")
    finding = info.value.findings[0]
    assert finding.code == "model-config-invalid" and "num_attention_heads" in finding.message


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_unreadable_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ConfigError):
        load_hf_config(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as missing:
        load_hf_config(tmp_path / "absent.json")
    # no stack key: the finding's key is the path, and the message says what is wrong with it
    assert missing.value.findings[0].key == str(tmp_path / "absent.json")
    assert missing.value.findings[0].message == "no such file"
    # `capacity --model-config PATH` takes the path as typed, not from the project directory
    assert missing.value.findings[0].fix == "give the path of the model's config.json"
