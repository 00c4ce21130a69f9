"""tests/paths.py lists exactly the stack files git tracks, so a user's own stack (written by
`vllm-stack init` into a clone) never changes what `make test` covers or compares."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.paths import ROOT, SHIPPED_STACK_FILES


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_shipped_stacks_are_the_tracked_stack_files() -> None:
    tracked = subprocess.run(["git", "ls-files", "Pulumi.*.yaml"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert sorted(tracked) == sorted(p.name for p in SHIPPED_STACK_FILES)
