"""Fixtures of the CLI tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.paths import PROJECT_DIR, stack_file


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project dir holding Pulumi.yaml and copies of the shipped v100 and a100 stacks."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    for stack in ("v100", "a100"):
        shutil.copy(stack_file(stack), tmp_path)
    return tmp_path


@pytest.fixture
def empty_project(tmp_path: Path) -> Path:
    """A project with the tests' Pulumi.yaml and no stack yet."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    return tmp_path
