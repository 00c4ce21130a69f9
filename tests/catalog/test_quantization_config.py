"""A checkpoint's `quantization_config` read as vLLM's quantization configs read it
(vllm_serving.catalog.hf_config_fields.checkpoint_quantization); the expected values are the
published configs' own fields, copied by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_serving.catalog.checkpoint_config import QuantScheme
from vllm_serving.catalog.hf_config_fields import checkpoint_quantization

CONFIGS = Path(__file__).parent / "configs"

# RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16 config.json (llm-compressor's output), trimmed
W4A16 = {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"group_0": {
    "input_activations": None, "output_activations": None, "targets": ["Linear"],
    "weights": {"group_size": 128, "num_bits": 4, "strategy": "group", "symmetric": True, "type": "int"}}}}
# RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic config.json, trimmed: FP8 weights, dynamic FP8 activations
FP8_DYNAMIC = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0": {
    "input_activations": {"dynamic": True, "num_bits": 8, "strategy": "token", "type": "float"},
    "targets": ["Linear"], "weights": {"dynamic": False, "num_bits": 8, "strategy": "channel", "type": "float"}}}}
# an AWQ checkpoint (e.g. Qwen/Qwen2.5-7B-Instruct-AWQ): bits, group_size, zero_point (AWQConfig.from_config)
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
# transformers' BitsAndBytesConfig.to_dict() of an 8-bit checkpoint
BNB_8BIT = {"quant_method": "bitsandbytes", "load_in_8bit": True, "load_in_4bit": False}


def test_compressed_tensors_groups_give_their_schemes() -> None:
    w4a16 = checkpoint_quantization(W4A16)
    assert w4a16 is not None and w4a16.schemes == (QuantScheme(weights_type="int", weights_bits=4, group_size=128),)
    fp8 = checkpoint_quantization(FP8_DYNAMIC)
    assert fp8 is not None and fp8.schemes == (QuantScheme(weights_type="float", weights_bits=8,
                                                           activations_type="float", activations_bits=8),)


def test_bits_and_group_size_are_the_configs() -> None:
    awq = checkpoint_quantization(AWQ)
    assert awq is not None and (awq.bits, awq.group_size, awq.zero_point) == (4, 128, True)
    assert awq.schemes == ()  # config_groups are compressed-tensors' alone
    bnb = checkpoint_quantization(BNB_8BIT)
    assert bnb is not None and bnb.bits == 8


# Qwen/Qwen3-30B-A3B-GPTQ-Int4 config.json's quantization_config, as published (GPTQModel's output)
GPTQ_INT4 = {"bits": 4, "checkpoint_format": "gptq", "damp_percent": 0.01, "desc_act": False, "group_size": 128,
             "model_file_base_name": None, "model_name_or_path": None, "quant_method": "gptq",
             "static_groups": False, "sym": True, "true_sequential": True}


def test_gptq_symmetry_and_activation_order_are_read() -> None:
    """GPTQMarlinConfig.from_config reads sym and desc_act: act-order checkpoints need g_idx."""
    gptq = checkpoint_quantization(GPTQ_INT4)
    assert gptq is not None
    assert (gptq.bits, gptq.group_size, gptq.symmetric, gptq.desc_act) == (4, 128, True, False)
    reordered = checkpoint_quantization(GPTQ_INT4 | {"desc_act": True, "sym": False})
    assert reordered is not None and (reordered.symmetric, reordered.desc_act) == (False, True)


@pytest.mark.parametrize(("config", "block"), [
    ("Qwen--Qwen3-32B-FP8.config.json", (128, 128)),
    ("Qwen--Qwen3-30B-A3B-FP8.config.json", (128, 128)),
    ("deepseek-ai--DeepSeek-V3.config.json", (128, 128)),
])
def test_published_fp8_checkpoints_give_their_block_size(config: str, block: tuple[int, int]) -> None:
    """Fp8Config.from_config: weight_block_size [128, 128] in each published config.json."""
    published = json.loads((CONFIGS / config).read_text(encoding="utf-8"))["quantization_config"]
    facts = checkpoint_quantization(published)
    assert facts is not None and facts.weight_block_size == block
    assert (facts.bits, facts.group_size, facts.schemes) == (None, None, ())


@pytest.mark.parametrize("config", ["openai--gpt-oss-20b.config.json", "nvidia--Qwen3.6-27B-NVFP4.config.json"])
def test_a_block_stating_none_of_the_read_fields_gives_no_facts(config: str) -> None:
    """gpt-oss's mxfp4 block names only the modules it leaves out; NVIDIA's modelopt block its
    per-layer algorithms: nothing of bits, groups, symmetry or FP8 blocks to carry."""
    published = json.loads((CONFIGS / config).read_text(encoding="utf-8"))["quantization_config"]
    assert checkpoint_quantization(published) is None


def test_a_group_that_is_not_an_object_is_passed_over_and_the_others_read() -> None:
    """A hand-edited config_groups entry that is a string or a list names no scheme (compressed-tensors
    reads each group as a QuantizationScheme object): the well-formed groups still count."""
    groups = {"preset": "W4A16", "targets": ["Linear"], **W4A16["config_groups"]}
    found = checkpoint_quantization(W4A16 | {"config_groups": groups})
    assert found is not None and found.schemes == (QuantScheme(weights_type="int", weights_bits=4, group_size=128),)
