"""An empty, short or unusable apiKey stops the program where it resolves the secret, before any
resource is registered, and the error never repeats the value. vLLM adds no authentication at all
for an empty key (vllm/entrypoints/openai/api_server.py build_app)."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from tests.conftest import shipped_stack
from tests.pulumi_harness import ProgramFailed
from tests.safety.helpers import SENTINELS, stacks_of_kind
from vllm_serving.rules.exposure import API_KEY_CODES

STACKS = [stacks_of_kind("docker")[0], stacks_of_kind("kubernetes")[0]]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize(("value", "code"), [
    ("", "api-key-empty"), ("LEAKME-short", "api-key-short"), ("LEAKME-" + "k" * 30 + "\n", "api-key-whitespace"),
])
def test_bad_api_key_registers_nothing(program: Any, stack: str, value: str, code: str) -> None:
    with pytest.raises(ProgramFailed) as failed:
        program(shipped_stack(stack), stack=stack, secrets={**SENTINELS, "apiKey": value})
    assert failed.value.resources == []
    assert isinstance(failed.value.error, pulumi.RunError)
    message = str(failed.value)
    assert "vllm-serving:apiKey" in message and API_KEY_CODES[code] in message and "openssl rand" in message
    assert "LEAKME" not in message


def test_a_long_key_deploys(program: Any) -> None:
    stack = STACKS[0]
    run = program(shipped_stack(stack), stack=stack, secrets=SENTINELS)
    assert run.of_type("Container")
