"""A value the facts refuse is named by the config.json key it was read from (hf_config.py reads
`num_experts_per_tok` into `experts_per_token`, `layer_types` into the attention layer count...),
so the user knows which line of their file to correct."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError, model_validator

from tests.paths import FIXTURES
from vllm_serving.catalog.config_json_errors import refused_value
from vllm_serving.catalog.hf_config import parse_hf_config
from vllm_serving.catalog.models import MODELS, LinearAttention, ModelArchitecture
from vllm_serving.findings import ConfigError


def _published(path: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES.parent / path).read_text(encoding="utf-8"))
    return data


QWEN35 = "fixtures/hf/qwen3.5-27b.config.json"
QWEN3_MOE = "catalog/configs/Qwen--Qwen3-30B-A3B.config.json"
DEEPSEEK_LITE = "fixtures/hf/deepseek-v2-lite-chat.config.json"
QWEN3_4B = "fixtures/hf/qwen3-4b.config.json"


@pytest.mark.parametrize(("config", "nested", "change", "key"), [
    (QWEN35, True, {"linear_num_key_heads": -1}, "linear_num_key_heads"),
    (QWEN35, True, {"linear_key_head_dim": -1}, "linear_key_head_dim"),
    (QWEN35, True, {"linear_value_head_dim": -1}, "linear_value_head_dim"),
    (QWEN35, True, {"linear_conv_kernel_dim": -1}, "linear_conv_kernel_dim"),
    (QWEN35, True, {"mtp_num_hidden_layers": -1}, "mtp_num_hidden_layers"),
    (QWEN35, True, {"layer_types": ["linear_attention"] * 64}, "layer_types"),  # no attention layer left
    (QWEN3_MOE, False, {"num_experts_per_tok": -1}, "num_experts_per_tok"),
    (QWEN3_MOE, False, {"moe_intermediate_size": -1}, "moe_intermediate_size"),
    (DEEPSEEK_LITE, False, {"n_shared_experts": -1}, "n_shared_experts"),
    (QWEN3_4B, False, {"vocab_size": -10**7}, "hidden_size, intermediate_size or vocab_size (the parameter count)"),
])
def test_the_message_and_the_fix_name_the_key_as_the_file_spells_it(
        config: str, nested: bool, change: dict[str, Any], key: str) -> None:
    data = _published(config)
    (data["text_config"] if nested else data).update(change)
    with pytest.raises(ConfigError) as refused:
        parse_hf_config(data, "config.json")
    finding = refused.value.findings[0]
    assert finding.message.startswith(f"{key} is ")
    assert finding.fix.startswith(f"correct {key} in the config.json")


def _refusal(model: type[ModelArchitecture | LinearAttention], facts: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as refused:
        model.model_validate(facts)
    return refused_value(refused.value)[0]


@pytest.mark.parametrize(("field", "value", "key"), [
    ("architecture", "", "architectures"),
    ("weights_dtype", "float8", "torch_dtype"),
    ("sliding_window_layers", -1, "layer_types"),
])
def test_facts_no_published_file_can_break_still_name_its_key(field: str, value: object, key: str) -> None:
    """The architecture comes from `architectures`, the dtype from `torch_dtype`, the attention
    layer counts from `layer_types`: what parse_hf_config reads them from."""
    facts = MODELS["Qwen3.5-27B"].model_dump() | {field: value}
    assert _refusal(ModelArchitecture, facts).startswith(f"{key} is ")
    linear = {"num_layers": 0, "num_key_heads": 16, "num_value_heads": 48, "key_head_dim": 128,
              "value_head_dim": 128}
    assert _refusal(LinearAttention, linear).startswith("layer_types is 0")


@pytest.mark.parametrize(("config", "nested", "missing"), [
    # an MoE with neither moe_intermediate_size nor intermediate_size has no expert width to build
    # (qwen3_moe.py FusedMoE(intermediate_size=config.moe_intermediate_size)): named as the MoE key
    (QWEN3_MOE, False, ("moe_intermediate_size", "intermediate_size")),
    (QWEN3_4B, False, ("hidden_size",)),
    (QWEN35, True, ("linear_key_head_dim",)),
])
def test_a_missing_key_is_named_as_the_file_spells_it(config: str, nested: bool, missing: tuple[str, ...]) -> None:
    data = _published(config)
    for key in missing:
        del (data["text_config"] if nested else data)[key]
    with pytest.raises(ConfigError) as refused:
        parse_hf_config(data, "config.json")
    assert f"has no '{missing[0]}'" in refused.value.findings[0].message


@pytest.mark.parametrize(("config", "shared"), [(DEEPSEEK_LITE, {}), (QWEN3_MOE, {"n_shared_experts": 1})])
def test_a_moe_config_without_an_expert_width_names_the_missing_key(config: str, shared: dict[str, Any]) -> None:
    """moe_intermediate_size (or intermediate_size) is the width FusedMoE builds each expert with
    (deepseek_v2.py, qwen3_moe.py): a file with neither is refused naming it, shared experts or not."""
    data = _published(config) | shared
    for key in ("moe_intermediate_size", "intermediate_size"):
        data.pop(key, None)
    with pytest.raises(ConfigError) as refused:
        parse_hf_config(data, "config.json")
    assert refused.value.findings[0].message == (
        "has no 'moe_intermediate_size' (looked in text_config, then the top level)")


class _Widths(BaseModel):
    """A check across fields whose message names none of them (the facts' own checks all name theirs)."""

    hidden: int
    heads: int

    @model_validator(mode="after")
    def _whole(self) -> _Widths:
        if self.hidden % self.heads:
            raise ValueError("the widths disagree")
        return self


def test_a_refusal_naming_no_key_still_says_what_to_correct() -> None:
    with pytest.raises(ValidationError) as refused:
        _Widths.model_validate({"hidden": 10, "heads": 3})
    assert refused_value(refused.value) == (
        "the widths disagree", "correct the values in the config.json to the model's published value "
        "(or copy its config.json again from the model's Hugging Face repository)")
