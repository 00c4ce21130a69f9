"""The fixes `check` proposes for a plan without margin (rules/capacity_rules.py): the smallest
--gpu-memory-utilization, or the longest --max-model-len, whose pessimistic plan holds the
requests. Each answer is checked against a plain scan of every candidate the fix may name (every
hundredth up to 0.98; every multiple of 1,024 tokens), planned one by one."""

from __future__ import annotations

import pytest

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS
from vllm_serving.planner.capacity import CapacityInputs, CapacityPlan, plan
from vllm_serving.planner.margin import context_for, utilization_for

INPUTS = CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], max_model_len=131072,
                        gpu_memory_utilization=0.85)


def _holds(changes: dict[str, float | int], requests: float) -> bool:
    return plan(INPUTS.model_copy(update=changes)).pessimistic_max_concurrency >= requests


@pytest.fixture(scope="module")
def current() -> CapacityPlan:
    return plan(INPUTS)


@pytest.mark.parametrize("requests", [2.0, 2.5])
def test_the_utilization_named_is_the_smallest_hundredth_that_holds_the_requests(
        current: CapacityPlan, requests: float) -> None:
    assert current.pessimistic_max_concurrency < requests  # the plan as it is has no margin
    scan = [u / 100 for u in range(86, 99)]  # 0.86 ... 0.98, above the stack's 0.85
    expected = next(u for u in scan if _holds({"gpu_memory_utilization": u}, requests))
    assert utilization_for(INPUTS, current, requests) == expected


def test_no_utilization_up_to_098_is_named_when_none_holds_the_requests(current: CapacityPlan) -> None:
    assert not _holds({"gpu_memory_utilization": 0.98}, 50)
    assert utilization_for(INPUTS, current, 50) is None


@pytest.mark.parametrize("requests", [2.0, 4.0])
def test_the_context_named_is_the_longest_multiple_of_1024_that_holds_the_requests(
        current: CapacityPlan, requests: float) -> None:
    lengths = range(131072 // 1024, 0, -1)
    expected = next(k * 1024 for k in lengths if _holds({"max_model_len": k * 1024}, requests))
    assert expected < 131072
    assert context_for(INPUTS, current, requests) == expected


def test_for_one_request_the_context_is_the_longest_the_pessimistic_plan_fits(current: CapacityPlan) -> None:
    assert context_for(INPUTS, current, 1) == current.pessimistic_max_model_len_that_fits


def test_no_context_is_named_when_not_even_1024_tokens_hold_the_requests(current: CapacityPlan) -> None:
    assert not _holds({"max_model_len": 1024}, 10_000)
    assert context_for(INPUTS, current, 10_000) is None


def test_the_next_hundredth_is_named_when_it_already_holds_the_requests(current: CapacityPlan) -> None:
    requests = plan(INPUTS.model_copy(update={"gpu_memory_utilization": 0.86})).pessimistic_max_concurrency
    assert current.pessimistic_max_concurrency < requests
    assert utilization_for(INPUTS, current, requests) == 0.86


def test_no_fix_goes_past_098_even_when_099_would_hold_the_requests(current: CapacityPlan) -> None:
    # the CUDA context and NCCL live outside vLLM's budget: 0.99 or 1.0 leaves them nothing
    requests = plan(INPUTS.model_copy(update={"gpu_memory_utilization": 0.99})).pessimistic_max_concurrency
    assert not _holds({"gpu_memory_utilization": 0.98}, requests)
    assert utilization_for(INPUTS, current, requests) is None


def test_the_utilization_may_go_up_to_098(current: CapacityPlan) -> None:
    """The fix names any hundredth up to 0.98 (vLLM only needs the CUDA context outside its
    budget): requests that only 0.98 holds get 0.98, not "no utilization"."""
    requests = plan(INPUTS.model_copy(update={"gpu_memory_utilization": 0.98})).pessimistic_max_concurrency
    assert not _holds({"gpu_memory_utilization": 0.97}, requests)
    assert utilization_for(INPUTS, current, requests) == 0.98
