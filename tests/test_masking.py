"""A secret in anything printed or rendered: masked, unless the operator hands in its value."""

from __future__ import annotations

from vllm_serving.masking import MASK, shown


def test_masked_unless_revealed() -> None:
    assert MASK == "********"  # what docs/security.md and the rendered outputs show
    assert shown(None, "VLLM_API_KEY") == "********"
    assert shown({}, "VLLM_API_KEY") == "********"
    assert shown({"HF_TOKEN": "hf_x"}, "VLLM_API_KEY") == "********"  # revealing one secret reveals no other
    assert shown({"VLLM_API_KEY": "sk-123", "HF_TOKEN": "hf_x"}, "VLLM_API_KEY") == "sk-123"
