"""What a healthy server of a stack must show, read from the stack's resolved spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vllm_serving.spec import ServingSpec


@dataclass(frozen=True)
class Expectations:
    served_name: str
    max_model_len: int | None
    """None when the stack leaves it to vLLM (the model's own context length, or -1: fitted)."""
    reasoning: bool
    """A reasoning parser is set: thinking must come back apart from the content."""
    tool_calling: bool
    """Auto tool choice with a tool-call parser: `tool_choice: auto` must yield tool calls."""
    api_key: bool
    """The stack sets the `apiKey` secret: `/v1/*` must refuse a request without it."""


def expectations_from_spec(spec: ServingSpec) -> Expectations:
    engine = spec.settings.engine
    return Expectations(
        served_name=spec.served_model_name,
        max_model_len=engine.max_model_len if (engine.max_model_len or 0) > 0 else None,
        reasoning=engine.reasoning_parser is not None,
        tool_calling=engine.enable_auto_tool_choice and engine.tool_call_parser is not None,
        api_key="apiKey" in spec.settings.secrets_set,
    )
