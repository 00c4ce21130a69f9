"""What a healthy server of a stack must show, read from the stack's resolved spec."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from vllm_serving.planner.capacity import plan_capacity

if TYPE_CHECKING:
    from vllm_serving.spec import ServingSpec


class PlannedKv(msgspec.Struct, frozen=True):
    """The plan's figures for one engine, and what the stack promises."""

    num_gpu_blocks: int
    block_size: int
    blocks_per_request: int
    max_model_len: int
    max_concurrency: float
    pessimistic_max_concurrency: float
    min_concurrency: float | None
    """capacity.minConcurrency."""


class Expectations(msgspec.Struct, frozen=True):
    served_name: str
    max_model_len: int | None
    """None when the stack leaves it to vLLM (the model's own context length, or -1: fitted)."""
    reasoning: bool
    """A reasoning parser is set: thinking must come back apart from the content."""
    tool_calling: bool
    """Auto tool choice with a tool-call parser: `tool_choice: auto` must yield tool calls."""
    api_key: bool
    """The stack sets the `apiKey` secret: `/v1/*` must refuse a request without it."""
    kv_cache: PlannedKv | None = None
    """The plan's KV cache, to set beside what the server reports; None on a CPU target."""


def expectations_from_spec(spec: ServingSpec) -> Expectations:
    engine = spec.settings.engine
    return Expectations(
        served_name=spec.served_model_name,
        max_model_len=engine.max_model_len if (engine.max_model_len or 0) > 0 else None,
        reasoning=engine.reasoning_parser is not None,
        tool_calling=engine.enable_auto_tool_choice and engine.tool_call_parser is not None,
        api_key="apiKey" in spec.settings.secrets_set,
        kv_cache=_planned_kv(spec),
    )


def _planned_kv(spec: ServingSpec) -> PlannedKv | None:
    if not spec.settings.hardware.uses_gpus:
        return None
    plan = plan_capacity(spec)
    return PlannedKv(num_gpu_blocks=plan.num_gpu_blocks, block_size=plan.block_size,
                     blocks_per_request=plan.blocks_per_request, max_model_len=plan.max_model_len,
                     max_concurrency=plan.max_concurrency,
                     pessimistic_max_concurrency=plan.pessimistic_max_concurrency,
                     min_concurrency=spec.settings.capacity.min_concurrency)
