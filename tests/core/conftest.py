"""Fixtures for the core tests: the shipped stacks' settings, and a way to edit them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.paths import ROOT
from vllm_serving.settings import StackSettings
from vllm_serving.spec import ServingSpec, resolve
from vllm_serving.stack_files.loader import load_settings, read_stack_file


def shipped_settings(stack: str) -> StackSettings:
    return load_settings(read_stack_file(ROOT / f"Pulumi.{stack}.yaml"))


def edit(settings: StackSettings, **sections: Any) -> StackSettings:
    """`edit(s, engine={"dtype": "bfloat16"})`: a copy with fields of sections replaced."""
    update: dict[str, Any] = {}
    for name, fields in sections.items():
        if name == "secrets_set":
            update[name] = fields
        else:
            update[name] = getattr(settings, name).model_copy(update=fields)
    return settings.model_copy(update=update)


def spec_of(settings: StackSettings, stack: str = "test") -> ServingSpec:
    return resolve(settings, stack)


@pytest.fixture(scope="session")
def v100() -> StackSettings:
    return shipped_settings("v100")


@pytest.fixture(scope="session")
def a100() -> StackSettings:
    return shipped_settings("a100")
