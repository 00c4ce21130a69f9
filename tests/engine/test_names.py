"""engine/names.py: what this project knows about vLLM's names beyond a release's registry."""

from __future__ import annotations

import pytest

from vllm_serving.catalog.models import MODELS
from vllm_serving.engine.names import OBSOLETE_ENV, REASONING_PARSER_FAMILY, TOOL_PARSER_FAMILY


def test_variables_vllm_dropped_say_what_replaces_them() -> None:
    # vLLM v0.10.2 vllm/envs.py defines VLLM_USE_TRITON_FLASH_ATTN (l.354), VLLM_ATTENTION_BACKEND
    # (l.478) and VLLM_USE_V1 (l.745); v0.19.1's envs.py none of them. A stack carried over from those
    # releases still sets them, and the user is told what to do instead.
    assert {"VLLM_USE_V1", "VLLM_ATTENTION_BACKEND", "VLLM_USE_TRITON_FLASH_ATTN"} <= OBSOLETE_ENV.keys()
    assert "engine.attentionBackend" in OBSOLETE_ENV["VLLM_ATTENTION_BACKEND"]


@pytest.mark.parametrize(("model", "tool", "reasoning"), [
    # vllm/tool_parsers/qwen3coder_tool_parser.py, qwen3xml_tool_parser.py: Qwen3's <tool_call><function=...>
    # markup; vllm/reasoning/qwen3_reasoning_parser.py: its <think> blocks
    ("Qwen3-32B", ("qwen3_coder", "qwen3_xml"), ("qwen3",)),
    ("Qwen3.6-27B", ("qwen3_coder", "qwen3_xml"), ("qwen3",)),
    # vllm/tool_parsers/openai_tool_parser.py and vllm/reasoning/gptoss_reasoning_parser.py: gpt-oss's harmony format
    ("gpt-oss-20b", ("openai",), ("openai_gptoss",)),
])
def test_a_models_own_parsers_are_of_its_family(model: str, tool: tuple[str, ...], reasoning: tuple[str, ...]) -> None:
    """The parsers written for a catalog model's markup are never reported as another family's."""
    family = MODELS[model].family
    assert [TOOL_PARSER_FAMILY.get(p) for p in tool] == [family] * len(tool)
    assert [REASONING_PARSER_FAMILY.get(p) for p in reasoning] == [family] * len(reasoning)
