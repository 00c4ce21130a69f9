"""The longest context vLLM v0.19.1 derives (config/model.py `_get_and_verify_max_len`), with
`--hf-overrides` applied as `ModelConfig.__post_init__` applies them."""

from __future__ import annotations

from tests.engine.schema_1 import schema_1_release
from vllm_serving.catalog.models import MODELS, RopeScaling
from vllm_serving.engine.release_registry import load
from vllm_serving.startup.max_len import DerivedLength, derived_max_model_len, hf_overrides

V0_19 = load("0.19.1")
V0_34 = load("0.34.0")
QWEN3 = MODELS["Qwen3-32B"]
YARN4 = RopeScaling(rope_type="yarn", factor=4.0, original_max_position_embeddings=32768)


def test_dotted_overrides_merge_and_replace_a_json_value() -> None:
    # vLLM's parser (utils/argparse_utils.py) merges the dotted items with `recursive_dict_update` and
    # appends them as one last `--hf-overrides JSON`; argparse keeps the last value, so the JSON given
    # first is gone: neither yarn's rope_type nor rope_theta is in what vLLM reads
    merged = hf_overrides([("--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 2}, "rope_theta": 1}'),
                           ("--hf-overrides.rope_scaling.factor", "4.0"),
                           ("--hf-overrides", "not json"),  # vLLM refuses it while parsing: left out here
                           ("--hf-overrides.text_config.max_position_embeddings", "65536"),
                           ("--hf-overrides.text_config.layer_types", '["full_attention"]'),
                           ("--hf-overrides.text_config.layer_types", '["sliding_attention"]')])
    assert merged == {"rope_scaling": {"factor": 4.0},
                      "text_config": {"max_position_embeddings": 65536,
                                      "layer_types": ["full_attention", "sliding_attention"]}}


def test_of_several_json_overrides_the_last_counts() -> None:
    # argparse's plain store: each `--hf-overrides JSON` replaces the one before
    yarn = ("--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 2}}')
    assert hf_overrides([yarn, ("--hf-overrides", '{"max_position_embeddings": 65536}')]) == {
        "max_position_embeddings": 65536}
    assert hf_overrides([("--hf-overrides", '{"max_position_embeddings": 65536}'), ("--hf-overrides", "[1]")]) == {
        "max_position_embeddings": 65536}  # not an object: vLLM refuses it, nothing read from it here


def test_yarn_stretches_the_original_length_in_v0_19_and_not_in_v0_34() -> None:
    model = QWEN3.model_copy(update={"rope_scaling": (YARN4,)})
    found = derived_max_model_len(model, V0_19)
    assert found is not None and found.tokens == 131072
    later = derived_max_model_len(model, V0_34)  # v0.34 reads YaRN's max_position_embeddings as already scaled
    assert later is not None and later.tokens == 40960


def test_only_yarn_starts_from_the_original_length() -> None:
    # v0.19.1 config/model.py _get_and_verify_max_len: every rope type but su/longrope/llama3 multiplies
    # by its factor, and only `rope_type == "yarn"` first takes original_max_position_embeddings. A
    # dynamic-NTK entry carrying the original length too: 40960 x 2 = 81920 (not 32768 x 2 = 65536).
    dynamic = RopeScaling(rope_type="dynamic", factor=2.0, original_max_position_embeddings=32768)
    found = derived_max_model_len(QWEN3.model_copy(update={"rope_scaling": (dynamic,)}), V0_19)
    assert QWEN3.max_position_embeddings == 40960
    assert found is not None and found.tokens == 81920


def test_llama3_rope_and_gemma3_are_not_stretched_again() -> None:
    llama = derived_max_model_len(MODELS["Llama-3.1-8B"], V0_19)
    assert llama is not None and llama.tokens == 131072  # llama3 is among the types that do not scale
    gemma = MODELS["gemma-3-27b-it"].model_copy(update={"rope_scaling": (RopeScaling(rope_type="linear", factor=8.0),)})
    found = derived_max_model_len(gemma, V0_19)
    assert found is not None and found.tokens == gemma.max_position_embeddings


def test_a_multimodal_models_language_model_takes_only_text_config_overrides() -> None:
    qwen36 = MODELS["Qwen3.6-27B"]
    top = derived_max_model_len(qwen36, V0_19, {"max_position_embeddings": 1_000_000})
    nested = derived_max_model_len(qwen36, V0_19, {"text_config": {"max_position_embeddings": 1_000_000}})
    assert top is not None and top.tokens == qwen36.max_position_embeddings
    assert nested is not None and nested.tokens == 1_000_000


def test_a_registry_without_the_derivation_decides_nothing() -> None:
    assert derived_max_model_len(QWEN3, schema_1_release()) is None


def test_a_yarn_override_under_rope_scaling_with_type_is_read_as_rope_type() -> None:
    # the HF spelling `rope_scaling: {type: yarn}` (vLLM's patch_rope_parameters renames it): 32768 x 4 = 131072
    found = derived_max_model_len(QWEN3, V0_19, {"rope_scaling": {"type": "yarn", "factor": 4.0,
                                                                  "original_max_position_embeddings": 32768}})
    assert found == DerivedLength(131072, "original_max_position_embeddings 32768 x RoPE factor 4")


def test_a_linear_rope_under_rope_parameters_stretches_the_configs_length() -> None:
    # Qwen3-32B's config.json: max_position_embeddings 40960; x 2 = 81920
    found = derived_max_model_len(QWEN3, V0_19, {"rope_parameters": {"rope_type": "linear", "factor": 2.0}})
    assert found == DerivedLength(81920, "max_position_embeddings 40960 x RoPE factor 2")


def test_a_null_factor_stretches_nothing() -> None:
    # config/model.py: "The model's RoPE configuration has a null scaling factor ..." -> 1.0
    found = derived_max_model_len(QWEN3, V0_19, {"rope_parameters": {"rope_type": "linear", "factor": None}})
    assert found == DerivedLength(40960, "max_position_embeddings 40960")
    nulled = QWEN3.model_copy(update={"rope_scaling": (RopeScaling(rope_type="linear", factor=None),)})
    assert derived_max_model_len(nulled, V0_19) == DerivedLength(40960, "max_position_embeddings 40960")


def test_llama3_rope_says_the_length_is_the_configs_own() -> None:
    found = derived_max_model_len(MODELS["Llama-3.1-8B"], V0_19)
    assert found == DerivedLength(131072, "max_position_embeddings 131072")


def test_a_dotted_override_keeps_a_value_that_is_not_json_as_text() -> None:
    # utils/argparse_utils.py: `json.loads(value_str)`, on JSONDecodeError the string itself
    assert hf_overrides([("--hf-overrides.rope_scaling.rope_type", "yarn"),
                         ("--hf-overrides.rope_scaling.factor", "2")]) == {
        "rope_scaling": {"rope_type": "yarn", "factor": 2}}
