"""How a plan judges its own figure: an estimate is shrunk by the release's worst measured error,
a figure read from vLLM's log is taken as it is, and the context is "limited by memory" only
when memory holds less than the model's whole context. Expected values by hand arithmetic."""

from __future__ import annotations

import pytest

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS
from vllm_serving.planner.capacity import CapacityInputs, plan

GIB = 2**30


def test_the_pessimistic_figure_is_what_vllm_would_log_at_the_worst_error() -> None:
    """error = (estimate - logged) / logged, so at the judged error e vLLM logs estimate / (1 + e)
    (not estimate x (1 - e), which is smaller by e^2 / (1 + e))."""
    p = plan(CapacityInputs(model=MODELS["Qwen3-8B"], gpu=GPUS["A100-80GB"], max_model_len=40960))
    assert p.judged_error > 0 and not p.available_kv_from_log
    assert p.pessimistic_available_kv_gib == pytest.approx(p.available_kv_gib / (1 + p.judged_error), rel=1e-9)
    assert p.pessimistic_available_kv_gib != pytest.approx(p.available_kv_gib * (1 - p.judged_error), rel=1e-9)


def test_a_figure_read_from_vllms_log_is_not_shrunk_by_the_error_band() -> None:
    p = plan(CapacityInputs(model=MODELS["Qwen3-8B"], gpu=GPUS["A100-80GB"], max_model_len=40960,
                            available_kv_gib=20.0))
    assert (p.judged_error, p.error_band) == (0.0, "")
    assert p.pessimistic_available_kv_gib == 20.0
    assert p.pessimistic_max_concurrency == p.max_concurrency


def test_memory_that_holds_exactly_the_whole_context_is_not_the_limit() -> None:
    """Qwen3-8B (config.json: 36 layers, 8 KV heads of 128, bf16): a token of a layer is
    2 x 8 x 128 x 2 = 4,096 bytes, a 16-token page 65,536; one group of 36 layers. A 40,960-token
    request (max_position_embeddings) takes 2,560 blocks: 2,560 x 36 x 65,536 bytes = 5.625 GiB
    hold exactly one, so the model's own limit is what binds."""
    p = plan(CapacityInputs(model=MODELS["Qwen3-8B"], gpu=GPUS["A100-80GB"], max_model_len=40960,
                            available_kv_gib=5.625))
    assert (p.num_gpu_blocks, p.max_concurrency, p.longest_context_by_memory) == (2560, 1.0, 40960)
    assert p.context_limited_by == "model"
    short = plan(CapacityInputs(model=MODELS["Qwen3-8B"], gpu=GPUS["A100-80GB"], max_model_len=40960,
                                available_kv_gib=5.625 * 2559 / 2560))
    assert (short.longest_context_by_memory, short.context_limited_by) == (40944, "memory")
