"""Shared fixtures: the program under Pulumi mocks, set up per test (mocks are process-global)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.pulumi_harness import ROOT, ProgramRun, run_program, stack_config

RunProgram = Callable[..., ProgramRun]


@pytest.fixture
def program() -> Iterator[RunProgram]:
    """`program(config, stack=..., secrets=..., preview=...)` runs __main__.py under mocks."""
    from pulumi.runtime.config import set_all_config

    yield run_program
    set_all_config({}, [])


@pytest.fixture
def project_dir() -> Path:
    return ROOT


def shipped_stack(name: str) -> dict[str, Any]:
    return stack_config(ROOT / f"Pulumi.{name}.yaml")
