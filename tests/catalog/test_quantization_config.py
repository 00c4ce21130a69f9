"""A checkpoint's `quantization_config` read as vLLM's quantization configs read it
(vllm_serving.catalog.hf_config_fields.checkpoint_quantization); the expected values are the
published configs' own fields, copied by hand."""

from __future__ import annotations

from vllm_serving.catalog.checkpoint_config import QuantScheme
from vllm_serving.catalog.hf_config_fields import checkpoint_quantization

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
