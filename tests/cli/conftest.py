"""Fixtures of the CLI tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.paths import ROOT


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project dir holding Pulumi.yaml and copies of the shipped v100 and a100 stacks."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path)
    for stack in ("v100", "a100"):
        shutil.copy(ROOT / f"Pulumi.{stack}.yaml", tmp_path)
    return tmp_path
