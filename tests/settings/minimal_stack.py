"""A minimal valid stack's raw config, parsed with sections replaced: the settings tests' input."""

from __future__ import annotations

from typing import Any

from vllm_serving.settings import StackSettings
from vllm_serving.settings.stack_config import parse_stack_config

BASE: dict[str, Any] = {
    "hardware": {"gpu": "A100-80GB", "count": 2},
    "image": {"tag": "v0.19.1"},
    "model": {"name": "Qwen3.5-27B", "hostPath": "/models/qwen"},
}


def parse_minimal(**sections: Any) -> StackSettings:
    """BASE with whole sections replaced, parsed as the program parses a stack's config."""
    return parse_stack_config({f"vllm-serving:{k}": v for k, v in {**BASE, **sections}.items()})
