"""`maxModelLen: -1`: vLLM fits the context to the KV cache (v1/core/kv_cache_utils.py
`_auto_fit_max_model_len`), and the planner plans the context it would fit."""

from __future__ import annotations

from tests.stack_builders import edit, shipped_settings, spec_of
from vllm_serving.planner.capacity import plan_capacity


def test_the_models_own_length_when_it_fits() -> None:
    plan = plan_capacity(spec_of(edit(shipped_settings("a100"), engine={"max_model_len": -1})))
    assert plan.fits_one_request and plan.max_model_len == 262144  # Qwen3.6's max_position_embeddings


def test_the_longest_that_fits_when_the_model_length_does_not() -> None:
    qwen3_4b_on_t4 = edit(shipped_settings("v100"), hardware={"count": 1, "gpu": "T4"}, model={"name": "Qwen3-4B"},
                          engine={"max_model_len": -1, "tensor_parallel_size": 1, "dtype": "half"})
    plan = plan_capacity(spec_of(qwen3_4b_on_t4))
    unfitted = plan_capacity(spec_of(edit(qwen3_4b_on_t4, engine={"max_model_len": None, "tensor_parallel_size": 1,
                                                                   "dtype": "half"})))
    assert not unfitted.fits_one_request  # the model's 40960 tokens do not fit a T4 beside 4B of weights
    assert plan.fits_one_request and plan.max_model_len == unfitted.longest_context_by_memory < 40960
