"""The catalog's tables, row by row, against where each row comes from: safetensors' dtype widths,
torch's, vLLM's float16 refusals and parser families, transformers' Gemma3TextConfig defaults,
the packing each quantization method's create_weights allocates. mutmut does not mutate tables,
so a deleted or changed row must fail here (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.catalog.test_checkpoint import shard
from tests.paths import FIXTURES
from vllm_serving.catalog.checkpoint import checkpoint_bytes, method_of
from vllm_serving.catalog.checkpoint_headers import HeaderError, header_weights
from vllm_serving.catalog.hf_config import load_hf_config, parse_hf_config
from vllm_serving.catalog.models import MODELS, lookup_model
from vllm_serving.catalog.vision_config import vision_encoder
from vllm_serving.engine.names import REASONING_PARSER_FAMILY, TOOL_PARSER_FAMILY
from vllm_serving.findings import ConfigError

QWEN3_4B: dict[str, Any] = json.loads((FIXTURES / "hf" / "qwen3-4b.config.json").read_text(encoding="utf-8"))


# safetensors' Dtype (safetensors/src/tensor.rs, `bitsize`): bits per element of each name
SAFETENSORS_BITS = {"BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "I16": 16, "U16": 16,
                    "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "F64": 64, "I64": 64, "U64": 64,
                    "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6}


@pytest.mark.parametrize(("dtype", "bits"), SAFETENSORS_BITS.items())
def test_each_safetensors_dtype_counts_its_width(tmp_path: Path, dtype: str, bits: int) -> None:
    shard(tmp_path / "model.safetensors", {"w": (dtype, [64, 8])})
    found = header_weights(tmp_path, 1)
    assert found is not None and found.loaded_bytes == 64 * 8 * bits / 8


def test_a_float32_checkpoint_takes_four_bytes_a_weight() -> None:
    """torch.float32 is 4 bytes: a checkpoint published in float32 loads twice a bfloat16 one."""
    fp32 = checkpoint_bytes(MODELS["Qwen3-8B"].model_copy(update={"weights_dtype": "float32"}))
    assert fp32.get("embedding") == 151936 * 4096 * 4
    assert checkpoint_bytes(MODELS["Qwen3-8B"]).get("embedding") == 151936 * 4096 * 2


@pytest.mark.parametrize("model_type", ["gemma2", "gemma3", "gemma3_text", "plamo2", "glm4"])
def test_every_model_type_vllm_refuses_in_float16_is_refused(model_type: str) -> None:
    """vllm/config/model.py _FLOAT16_NOT_SUPPORTED_MODELS (v0.19.1), all five."""
    assert parse_hf_config(QWEN3_4B | {"model_type": model_type}, "config.json").refuses_float16


@pytest.mark.parametrize(("model_type", "family"), [
    ("qwen3", "qwen3"), ("qwen3_moe", "qwen3"), ("qwen3_5", "qwen3"), ("qwen2", "qwen2"), ("llama", "llama"),
    ("mistral", "mistral"), ("gemma3", "gemma"), ("deepseek_v3", "deepseek"), ("glm4_moe", "glm"),
    ("kimi_k2", "kimi"), ("gpt_oss", "gpt_oss"),
])
def test_a_model_type_gives_the_family_its_vllm_parsers_are_filed_under(model_type: str, family: str) -> None:
    """The family picks the tool-call and reasoning parsers (engine/names.py files vLLM's glm45
    parser under glm, kimi_k2 under kimi, openai_gptoss under gpt_oss...)."""
    assert parse_hf_config(QWEN3_4B | {"model_type": model_type}, "config.json").family == family
    assert family in set(TOOL_PARSER_FAMILY.values()) | set(REASONING_PARSER_FAMILY.values()) | {"qwen2"}


@pytest.mark.parametrize(("ssm_dtype", "state_bytes"), [("float32", 4), ("bfloat16", 2), ("float16", 2)])
def test_the_deltanet_state_takes_the_width_of_mamba_ssm_dtype(ssm_dtype: str, state_bytes: int) -> None:
    config = json.loads((FIXTURES / "hf" / "qwen3.5-27b.config.json").read_text(encoding="utf-8"))
    config["text_config"]["mamba_ssm_dtype"] = ssm_dtype
    linear = parse_hf_config(config, "config.json").linear_attention
    assert linear is not None and linear.state_dtype_bytes == state_bytes


def test_a_bare_gemma3_text_config_is_transformers_gemma3_text_defaults() -> None:
    """Gemma3TextConfig.__init__ (transformers/models/gemma3/configuration_gemma3.py): vocab
    262208, hidden 2304, intermediate 9216, 26 layers, 8 heads, 4 KV heads of 256, 131072
    positions, tied embeddings, a 4096-token window on all but every 6th layer."""
    model = parse_hf_config({"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text"}, "config.json")
    assert (model.vocab_size, model.hidden_size, model.intermediate_size, model.num_hidden_layers) == (
        262208, 2304, 9216, 26)
    assert (model.num_attention_heads, model.num_key_value_heads, model.head_dim) == (8, 4, 256)
    assert (model.max_position_embeddings, model.tie_word_embeddings) == (131072, True)
    assert (model.sliding_window, model.sliding_window_layers) == (4096, 26 - 26 // 6)


def test_qwen3_vl_checkpoints_are_the_qwen3_vl_family() -> None:
    """Qwen/Qwen3-VL-235B-A22B-Thinking (Qwen3VLMoeForConditionalGeneration): qwen3_vl.py's encoder,
    with a video limit of its own."""
    config = json.loads((FIXTURES / "hf" / "qwen3-vl-235b-a22b-thinking.config.json").read_text(encoding="utf-8"))
    image = {"size": {"longest_edge": 16777216}}
    video = {"size": {"longest_edge": 25165824}}
    vision = vision_encoder(config, {"image": image, "video": video}, "qwen3-vl")
    assert vision is not None and vision.family == "qwen3_vl" and vision.video_max_pixels == 25165824


def test_a_config_json_past_four_mib_is_refused_unparsed(tmp_path: Path) -> None:
    """Published config.json files are kilobytes; 4 MiB is the cap (MAX_CONFIG_BYTES)."""
    path = tmp_path / "config.json"
    text = json.dumps(QWEN3_4B)
    path.write_text(text + " " * (4 * 2**20 - len(text)))
    assert load_hf_config(path).model_type == "qwen3"  # exactly 4 MiB: read
    path.write_text(text + " " * (4 * 2**20 + 1 - len(text)))
    with pytest.raises(ConfigError, match="larger than 4 MiB than any config.json"):
        load_hf_config(path)


def test_an_index_of_more_shards_than_any_checkpoint_is_refused(tmp_path: Path) -> None:
    """DeepSeek-V3's index names 163 shards; 4096 (MAX_SHARDS) is past any published checkpoint."""
    names = {f"w{i}": f"model-{i:05d}.safetensors" for i in range(4097)}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": names}))
    with pytest.raises(HeaderError, match="too many"):
        header_weights(tmp_path, 1)


def test_an_ambiguous_name_lists_four_candidates_at_most() -> None:
    """`qwen3` is a word of most catalog models: the refusal names four, a line a person reads."""
    found = lookup_model("qwen3")
    assert found.name is None and found.how == "ambiguous" and len(found.candidates) == 4


# bytes a weight element takes, by hand from each method's create_weights (vLLM v0.19.1,
# model_executor/layers/quantization/): packed values plus their scales and zero points
PACKED_BYTES = {
    "fp8": 1 + 4 / 128**2,  # fp8.py: a float8_e4m3fn byte, a float32 scale per 128 x 128 block
    "int8": 1.0,  # compressed_tensors W8A8: an int8 byte (a per-channel scale is negligible)
    "awq": 0.5 + 2 / 128 + 0.5 / 128,  # awq.py: int32-packed 4-bit, a float16 scale and a 4-bit zero per 128
    "gptq": 0.5 + 2 / 128 + 0.5 / 128,  # gptq.py: the same, group 128
    "mxfp4": 0.5 + 1 / 32,  # mxfp4.py: two 4-bit values a byte, an e8m0 byte per 32
    "bitsandbytes_4bit": 0.5 + 4 / 64,  # bitsandbytes.py: two 4-bit values a byte, a float32 absmax per 64
    "bitsandbytes_8bit": 1.0,  # bitsandbytes.py: an int8 byte
    "modelopt_fp4": 0.5 + 1 / 16,  # modelopt.py: two FP4 values a byte, a float8 scale per 16
}


@pytest.mark.parametrize(("method", "per_element"), PACKED_BYTES.items())
def test_each_method_packs_a_weight_into_its_bytes(method: str, per_element: float) -> None:
    packing = method_of(method)
    assert packing is not None and packing["bytes_per_element"] == pytest.approx(per_element)


@pytest.mark.parametrize(("quant_method", "method"), [
    ("fp8_e4m3", "fp8"), ("compressed-tensors-fp8", "fp8"), ("gptq-int4", "gptq"), ("awq_marlin", "awq"),
    ("gptq_marlin", "gptq"), ("nvfp4", "modelopt_fp4"), ("compressed-tensors", "fp8"), ("w8a8", "int8"),
    ("bitsandbytes", "bitsandbytes_4bit"), ("AWQ", "awq"),
])
def test_each_spelling_of_a_method_packs_as_that_method(quant_method: str, method: str) -> None:
    """vLLM's own names for the same checkpoints: awq_marlin and gptq_marlin are kernels of awq
    and gptq checkpoints; bitsandbytes without load_in_8bit loads 4-bit (BitsAndBytesConfig)."""
    assert method_of(quant_method) is method_of(method) is not None


def test_fp8_leaves_embeddings_routers_and_norms_in_16_bits() -> None:
    """fp8.py converts the linear layers only: modules_to_not_convert of the published checkpoints
    (Qwen3-30B-A3B-FP8's lists lm_head and every mlp.gate)."""
    fp8 = method_of("fp8")
    assert fp8 is not None
    assert set(fp8["quantized"]) == {"attention_qo", "attention_kv", "mlp", "experts", "shared_expert",
                                     "linear_attention_proj", "mtp"}
    mxfp4 = method_of("mxfp4")
    assert mxfp4 is not None and mxfp4["quantized"] == ["experts"]  # gpt-oss: attention and routers bf16
