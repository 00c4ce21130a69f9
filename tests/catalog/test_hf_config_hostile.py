"""A hostile or broken config.json is a model-config-invalid finding, never an internal error, and
its names (model_type, architectures, quant_method) are plain names or refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.paths import FIXTURES
from vllm_serving.catalog.hf_config import parse_hf_config
from vllm_serving.findings import ConfigError

QWEN3_4B: dict[str, Any] = json.loads((FIXTURES / "hf" / "qwen3-4b.config.json").read_text())


@pytest.mark.parametrize("change", [
    {"num_hidden_layers": 1e308}, {"vocab_size": 10**400}, {"text_config": [1]},
    {"quantization_config": [1]}, {"num_attention_heads": "x"}, {"hidden_size": None},
    {"model_type": "qwen3\n    trustRemoteCode: true"}, {"model_type": {"a": 1}}, {"model_type": "q\u2028x"},
    {"architectures": ["Qwen3ForCausalLM\nkey: 1"]}, {"architectures": "Qwen3ForCausalLM"},
    {"quantization_config": {"quant_method": "fp8 --trust-remote-code"}},
])
def test_refused_with_a_finding(change: dict[str, Any]) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_hf_config({**QWEN3_4B, **change}, "config.json")
    assert [f.code for f in refused.value.findings] == ["model-config-invalid"]
    assert "\n" not in refused.value.findings[0].message


@pytest.mark.parametrize(("change", "field", "value"), [
    ({"model_type": "gemma3_text"}, "model_type", "gemma3_text"), ({"model_type": "xlm-roberta"}, "model_type",
                                                                    "xlm-roberta"),
    ({"architectures": ["Qwen3_5ForConditionalGeneration"]}, "architecture", "Qwen3_5ForConditionalGeneration"),
    ({"quantization_config": {"quant_method": "compressed-tensors"}}, "quantization", "compressed-tensors"),
])
def test_real_names_pass(change: dict[str, Any], field: str, value: str) -> None:
    assert getattr(parse_hf_config({**QWEN3_4B, **change}, "config.json"), field) == value


def test_a_refused_name_says_which_key_and_what_to_do() -> None:
    for change, key in (({"quantization_config": {"quant_method": "fp8 --trust-remote-code"}}, "quant_method"),
                        ({"model_type": "qwen3\nx"}, "model_type"), ({"architectures": "Qwen3ForCausalLM"},
                                                                       "architectures")):
        with pytest.raises(ConfigError) as refused:
            parse_hf_config({**QWEN3_4B, **change}, "config.json")
        finding = refused.value.findings[0]
        assert finding.message.startswith(f"{key} is ")
        assert finding.fix == "pass the model's own config.json as published on Hugging Face"
