"""The compute dtype vLLM v0.19.1 resolves (config/model.py _resolve_auto_dtype) and what it costs:
a bfloat16 checkpoint that refuses float16 (Gemma 3) runs float32 below compute capability 8.0,
with weights and an `auto` KV cache at 4 bytes per value."""

from __future__ import annotations

import pytest

from tests.rules.boundary import findings
from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS, ModelArchitecture
from vllm_serving.planner.capacity import CapacityInputs, plan
from vllm_serving.planner.compute_dtype import compute_dtype

GEMMA_12B = MODELS["gemma-3-12b-it"]
QWEN = MODELS["Qwen3-8B"]


@pytest.mark.parametrize(("model", "gpu", "dtype", "expected"), [
    (GEMMA_12B, "V100-32GB", None, "float32"),   # float16 invalid for gemma3, bfloat16 unsupported
    (GEMMA_12B, "T4", "auto", "float32"),
    (GEMMA_12B, "A100-80GB", None, "bfloat16"),
    (QWEN, "V100-32GB", None, "float16"),        # the first supported dtype below CC 8.0
    (QWEN, "A100-80GB", None, "bfloat16"),
    (GEMMA_12B, "V100-32GB", "half", "float16"),  # named: taken as is (dtype-fp16-refused errs)
    (QWEN.model_copy(update={"weights_dtype": "float32"}), "A100-80GB", None, "bfloat16"),  # downcast
    (GEMMA_12B.model_copy(update={"weights_dtype": "float16"}), "A100-80GB", None, "bfloat16"),
    (QWEN.model_copy(update={"weights_dtype": "float16"}), "A100-80GB", None, "float16"),
])
def test_auto_resolution(model: ModelArchitecture, gpu: str, dtype: str | None, expected: str) -> None:
    assert compute_dtype(model, GPUS[gpu], dtype) == expected


def test_gemma_3_12b_on_v100_runs_float32() -> None:
    """Every tensor at 4 bytes: twice what the bfloat16 checkpoint takes on an A100, more than a
    V100-32GB's budget; at TP 2 each GPU holds about half (norms stay whole), and the KV cache
    stores 4-byte values: 48 layers x 2 x 8 KV heads x 256 x 4 B."""
    one = plan(CapacityInputs(model=GEMMA_12B, gpu=GPUS["V100-32GB"]))
    bf16 = plan(CapacityInputs(model=GEMMA_12B, gpu=GPUS["A100-80GB"])).weights_gib_per_gpu
    assert one.dtype == "float32"
    assert one.weights_gib_per_gpu == pytest.approx(2 * bf16)
    assert one.weights_gib_per_gpu > 44 and not one.weights_fit
    two = plan(CapacityInputs(model=GEMMA_12B, gpu=GPUS["V100-32GB"], tp=2))
    assert two.weights_gib_per_gpu == pytest.approx(bf16, rel=0.01) and two.weights_fit
    assert two.kv_bytes_per_token_per_gpu == 48 * 2 * (8 // 2) * 256 * 4
    # the same stack on an A100 runs the checkpoint's bfloat16: half the weights and KV bytes
    a100 = plan(CapacityInputs(model=GEMMA_12B, gpu=GPUS["A100-80GB"], tp=2))
    assert a100.kv_bytes_per_token_per_gpu * 2 == two.kv_bytes_per_token_per_gpu


def test_the_rules_see_the_same_dtype() -> None:
    """check on the V100 stack with Gemma 3 12B and dtype unset: the warning names float32 and
    the memory error counts float32 weights."""
    found = {f.code: f for f in findings("v100", {"model": {"name": "gemma-3-12b-it"},
                                                  "engine": {"dtype": None, "tensor_parallel_size": 1}})}
    assert "runs in float32" in found["dtype-auto-falls-back-to-half"].message
    float32 = plan(CapacityInputs(model=GEMMA_12B, gpu=GPUS["V100-32GB"])).weights_gib_per_gpu
    assert f"weights need {float32:.2f} GiB" in found["weights-exceed-budget"].message
