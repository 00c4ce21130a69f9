"""A start-up case (the corpus format, tests/fixtures/startup_logs/README.md) read as the estimator's
inputs: what `vllm-stack calibrate --write-case` writes is what the estimate is compared on."""

from __future__ import annotations

from typing import Any

import pytest

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.planner.startup_case import case_inputs, gpu_of

SHAPE = {"hidden_size": 4096, "intermediate_size": 14336, "vocab_size": 128256, "num_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "dtype_bytes": 2}


def _case(engine: dict[str, Any] | None = None, gpu: dict[str, Any] | None = None,
          model: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "vllm_version": "0.19.1",
        "gpu": {"name": "NVIDIA L4", "total_gib": 22.05, **(gpu or {})},
        "model": {"architecture": "LlamaForCausalLM", **SHAPE, **(model or {})},
        "engine": {"usage_context": "openai", "tp": 2, "pp": 1, "gpu_memory_utilization": 0.92,
                   "max_model_len": 32000, "max_num_batched_tokens": 2048, "max_num_seqs": 128,
                   "enforce_eager": False, "sampler": "torch_sort", **(engine or {})},
        "logged": {"weights_gib": 14.9889},
    }


def test_a_plain_case_gives_the_estimate_its_release_gpu_shape_and_flags() -> None:
    inputs = case_inputs(_case())
    assert (inputs.vllm_version, inputs.gpu_total_gib, inputs.gpu_name, inputs.weights_gib) == (
        "0.19.1", 22.05, "NVIDIA L4", 14.9889)
    assert (inputs.model.hidden_size, inputs.model.num_layers, inputs.model.linear_attention_layers) == (4096, 32, 0)
    assert (inputs.tp, inputs.pp, inputs.gpu_memory_utilization, inputs.max_model_len) == (2, 1, 0.92, 32000)
    assert (inputs.max_num_batched_tokens, inputs.max_num_seqs, inputs.usage_context) == (2048, 128, "openai")
    assert (inputs.sampler, inputs.enforce_eager, inputs.architecture) == ("torch_sort", False, "LlamaForCausalLM")
    # the catalog's L4: compute capability 8.9, 58 SMs (NVIDIA's Ada whitepaper)
    assert (inputs.compute_capability, inputs.sm_count) == ((8, 9), 58)
    assert inputs.env == {} and inputs.flashinfer_installed and not inputs.compile_cache_warm
    assert not inputs.quantized and inputs.vision is None and dict(inputs.mm_limits) == {}
    assert not inputs.skip_mm_profiling and not inputs.mm_encoder_data_parallel


def test_what_the_log_said_of_the_runner_cache_and_image_reaches_the_estimate() -> None:
    inputs = case_inputs(_case(
        engine={"model_runner": "v2", "env": {"VLLM_USE_FLASHINFER_SAMPLER": "0"}, "flashinfer_installed": False,
                "compile_cache": "warm", "quantization": "fp8", "enforce_eager": True,
                "limit_mm_per_prompt": {"video": 0}, "skip_mm_profiling": True, "mm_encoder_tp_mode": "data"},
        gpu={"compute_capability": [9, 0], "sm_count": 114},
        model={"linear_attention_layers": 48, "experts_per_token": 8, "expert_intermediate_size": 1024}))
    assert inputs.env == {"VLLM_USE_V2_MODEL_RUNNER": "1", "VLLM_USE_FLASHINFER_SAMPLER": "0"}
    assert not inputs.flashinfer_installed and inputs.compile_cache_warm and inputs.quantized and inputs.enforce_eager
    assert (inputs.compute_capability, inputs.sm_count) == ((9, 0), 114)  # stated: not the catalog's L4
    assert (inputs.model.linear_attention_layers, inputs.model.experts_per_token,
            inputs.model.expert_intermediate_size) == (48, 8, 1024)
    assert dict(inputs.mm_limits) == {"video": 0} and inputs.skip_mm_profiling and inputs.mm_encoder_data_parallel
    assert case_inputs(_case(engine={"model_runner": "v1"})).env == {"VLLM_USE_V2_MODEL_RUNNER": "0"}
    assert case_inputs(_case(engine={"compile_cache": "cold", "mm_encoder_tp_mode": "weights"})).compile_cache_warm \
        is False


@pytest.mark.parametrize(("logged", "catalog"), [
    ("NVIDIA H100 80GB HBM3", "H100-80GB"),
    ("Tesla T4 (Kaggle, x2)", "T4"),
    ("NVIDIA L4", "L4"),
    ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
    ("Tesla V100-SXM2-32GB", "V100-32GB"),
    ("24 GB", None),           # a GPU given by its memory alone
    ("NVIDIA GeForce", None),  # no model number
])
def test_a_logged_device_name_is_the_catalog_gpu_it_names(logged: str, catalog: str | None) -> None:
    found = gpu_of(logged)
    assert (found.name if found else None) == catalog
    unknown = case_inputs(_case(gpu={"name": "24 GB"}))
    assert unknown.compute_capability is None and unknown.sm_count is None
    assert GPUS["L4"].sm_count == 58
