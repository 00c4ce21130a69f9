"""What gives a plan margin: the utilization, or the context length, at which the KV cache
holds a number of full requests even at the release's worst measured error (error_band.py).

Both search with the planner itself (`capacity.plan`), so the answer is the plan's own."""

from __future__ import annotations

from vllm_serving.planner.capacity import CapacityInputs, CapacityPlan, plan

MAX_UTILIZATION = 0.98
"""The most a fix proposes: vLLM needs some memory outside its budget (the CUDA context)."""
STEP = 0.01


def utilization_for(inputs: CapacityInputs, current: CapacityPlan, requests: float) -> float | None:
    """The smallest --gpu-memory-utilization (in steps of 0.01, at most MAX_UTILIZATION) whose
    pessimistic plan holds `requests` full requests; None if none does."""
    util = round(current.gpu_memory_utilization + STEP, 2)
    while util <= MAX_UTILIZATION:
        if plan(inputs.model_copy(update={"gpu_memory_utilization": util})).pessimistic_max_concurrency >= requests:
            return util
        util = round(util + STEP, 2)
    return None


def context_for(inputs: CapacityInputs, current: CapacityPlan, requests: float) -> int | None:
    """The longest --max-model-len, in whole multiples of 1,024 tokens, whose pessimistic plan
    holds `requests` full requests; None if not even 1,024 tokens do."""
    if requests <= 1:
        fits = current.pessimistic_max_model_len_that_fits
        return fits if fits else None
    low, high = 0, current.max_model_len // 1024
    while low < high:  # concurrency falls as the length grows: bisect on kibi-tokens
        mid = (low + high + 1) // 2
        if plan(inputs.model_copy(update={"max_model_len": mid * 1024})).pessimistic_max_concurrency >= requests:
            low = mid
        else:
            high = mid - 1
    return low * 1024 if low else None
