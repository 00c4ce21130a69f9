"""What vLLM's OpenAI-compatible server puts in a chat completion, per release, as data.

The model's thinking (with engine.reasoningParser set) comes back apart from the answer, in a
field of the message (`choices[0].message`, streamed: `choices[0].delta`) whose name changed:

- up to v0.11.0: `reasoning_content` only (vllm/entrypoints/openai/protocol.py ChatMessage, v0.10.2);
- v0.11.1 to v0.15: `reasoning`, plus `reasoning_content` as a deprecated copy of it
  (vllm#27752; protocol.py ChatMessage `handle_deprecated_reasoning_content`, v0.11.2 to v0.15.1);
- from v0.16: `reasoning` only (vllm#33402; vllm/entrypoints/openai/chat_completion/protocol.py
  ChatMessage and vllm/entrypoints/openai/engine/protocol.py DeltaMessage, v0.16.0 to v0.34.0).
"""

from __future__ import annotations

# (first release, the message fields that carry the reasoning, the current name first); newest first
REASONING_FIELDS_SINCE: tuple[tuple[tuple[int, int, int], tuple[str, ...]], ...] = (
    ((0, 16, 0), ("reasoning",)),
    ((0, 11, 1), ("reasoning", "reasoning_content")),
    ((0, 0, 0), ("reasoning_content",)),
)


def reasoning_fields(version: tuple[int, int, int] | None) -> tuple[str, ...]:
    """The message fields a release returns the reasoning in; an unknown version (a moving tag)
    gets the newest releases' fields."""
    if version is None:
        return REASONING_FIELDS_SINCE[0][1]
    return next(fields for since, fields in REASONING_FIELDS_SINCE if version >= since)
