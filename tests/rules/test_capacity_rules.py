"""capacity_rules.py at its boundaries, placed with the planner's own figures for the stack."""

from __future__ import annotations

import math

import pytest

from tests.rules.boundary import Boundary, check_boundary
from tests.stack_builders import edit, shipped_settings, spec_of
from vllm_serving.planner.capacity import plan_capacity


def _plan(stack: str, **engine: object):  # type: ignore[no-untyped-def]
    return plan_capacity(spec_of(edit(shipped_settings(stack), engine=engine)))


def _fit_utilization(stack: str) -> float:
    """The utilization at which the weights plus overheads exactly fill each GPU's budget."""
    plan = _plan(stack)
    return (plan.weights_gib_per_gpu + plan.overhead_gib) / (plan.budget_gib / plan.gpu_memory_utilization)


def _boundaries() -> list[Boundary]:
    fit = _fit_utilization("v100")
    low = _plan("v100", gpu_memory_utilization=0.36)
    longest = low.max_model_len_that_fits
    assert longest > 0
    worst = low.pessimistic_max_model_len_that_fits
    assert 0 < worst < longest, "the error band leaves fewer tokens than the estimate"
    held = _plan("v100").pessimistic_max_concurrency
    return [
        Boundary("weights-exceed-budget", "v100",
                 {"engine": {"gpu_memory_utilization": math.floor(fit * 1000 - 1) / 1000}},
                 {"engine": {"gpu_memory_utilization": math.ceil(fit * 1000 + 1) / 1000}},
                 f"utilization just below -> just above {fit:.3f}"),
        Boundary("weights-exceed-budget", "v100",
                 {"engine": {"tensor_parallel_size": 2}}, {"engine": {"tensor_parallel_size": 3}},
                 "60 GiB of fp16 weights on 32 GiB V100s: TP 2 -> 3"),
        Boundary("weights-exceed-budget", "v100",
                 {"engine": {"tensor_parallel_size": 1, "pipeline_parallel_size": 2}},
                 {"engine": {"tensor_parallel_size": 1, "pipeline_parallel_size": 4}}, "TP 1: PP 2 -> 4",
                 says=("each of 2 GPU(s)",)),
        Boundary("kv-cache-too-small", "v100",
                 {"engine": {"gpu_memory_utilization": 0.36, "max_model_len": longest + 1}},
                 {"engine": {"gpu_memory_utilization": 0.36, "max_model_len": longest}},
                 "maxModelLen one token past the longest request that fits -> at it",
                 says=(f"at most {longest}",)),
        Boundary("capacity-tight", "v100",
                 {"engine": {"gpu_memory_utilization": 0.36, "max_model_len": worst + 1}},
                 {"engine": {"gpu_memory_utilization": 0.36, "max_model_len": worst}},
                 "maxModelLen one token past the longest request at the worst error -> at it",
                 says=(f"longest request is {worst} tokens",),
                 # every change that makes room, in the order a user weighs them: the cheapest first
                 fix=(f"raise engine.gpuMemoryUtilization to 0.37, or lower engine.maxModelLen to {worst}, "
                      "or add GPUs (engine.tensorParallelSize)")),
        Boundary("capacity-below-min-concurrency", "v100",
                 {"capacity": {"min_concurrency": math.floor(held * 100 + 1) / 100}},
                 {"capacity": {"min_concurrency": math.floor(held * 100) / 100}},
                 f"minConcurrency just above -> at the {held:.2f} requests held at the worst error",
                 says=(f"holds {held:.2f}", "lower engine.maxModelLen to")),
        Boundary("gpu-memory-utilization-high", "a100", {"engine": {"gpu_memory_utilization": 0.951}},
                 {"engine": {"gpu_memory_utilization": 0.95}}, "0.951 -> 0.95"),
    ]


BOUNDARIES = _boundaries()


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_forced_fp8_halves_the_weights_of_a_16_bit_checkpoint() -> None:
    """`quantization: fp8` quantizes while loading: 60 GiB of fp16 weights become 30 GiB."""
    one_gpu = {"gpu": "A100-40GB", "count": 1}
    engine = {"tensor_parallel_size": None, "gpu_memory_utilization": 0.95}
    check_boundary(Boundary("weights-exceed-budget", "v100", {"hardware": one_gpu, "engine": engine},
                            {"hardware": one_gpu, "engine": {**engine, "quantization": "fp8"}},
                            "one A100-40GB: fp16 -> forced fp8"))
