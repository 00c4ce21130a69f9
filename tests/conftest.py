"""Shared fixtures: the program under Pulumi mocks, set up per test (mocks are process-global).

Also the guard that keeps every test off the example stacks at the repository root: opening one
in-process fails the test, so a user's edit of an example can never break `make test`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.paths import PROJECT_DIR, is_example_stack, stack_file
from tests.pulumi_harness import ProgramRun, run_program, stack_config

RunProgram = Callable[..., ProgramRun]


class ReadExampleStack(PermissionError):
    """A test opened an example stack at the repository root instead of its copy in PROJECT_DIR."""


def _refuse_example_stacks(event: str, args: tuple[Any, ...]) -> None:
    # every open() and os.open() raises the "open" audit event; the path is its first argument
    if event == "open" and args and isinstance(args[0], str | Path):
        path = os.path.abspath(args[0])
        if is_example_stack(path):
            raise ReadExampleStack(f"{path} is an example users edit: read tests.paths.stack_file(...) "
                                   "(the tests' copy in tests/fixtures/project/) instead")


sys.addaudithook(_refuse_example_stacks)


@pytest.fixture
def program() -> Iterator[RunProgram]:
    """`program(config, stack=..., secrets=..., preview=...)` runs __main__.py under mocks."""
    from pulumi.runtime.config import set_all_config

    yield run_program
    set_all_config({}, [])


@pytest.fixture
def project_dir() -> Path:
    return PROJECT_DIR


def shipped_stack(name: str) -> dict[str, Any]:
    return stack_config(stack_file(name))
