"""The example stacks at the repository root are the user's to edit: the tests read their own copies
(tests/fixtures/project/), and editing, replacing or adding a root stack file leaves them green."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ReadExampleStack
from tests.paths import PROJECT_DIR, ROOT, SHIPPED_STACKS, is_example_stack, stack_file

# Where copying the repository stops: environments, caches and history are not the project.
NOT_COPIED = {".git", ".venv", ".tools", ".mypy_cache", ".pytest_cache", ".ruff_cache", "__pycache__", "mutants",
              ".import_linter_cache", ".hypothesis"}
# Golden outputs that read stacks the way users' commands do: `check` over every stack, a plan, a
# promotion's diff (the rest read the same copies, through the same tests.paths; the guard in
# tests/conftest.py covers every test in-process).
EDITED_RUN = [f"tests/test_cli_outputs_unchanged.py::test_cli_output_is_unchanged[{case}]"
              for case in ("check", "plan.local", "diff.v100-staging.v100-prod")]


def test_the_tests_project_holds_a_copy_of_each_stack_the_tests_cover() -> None:
    assert sorted(p.name for p in PROJECT_DIR.glob("Pulumi.*.yaml")) == sorted(
        f"Pulumi.{name}.yaml" for name in SHIPPED_STACKS)
    assert (PROJECT_DIR / "Pulumi.yaml").is_file()


def test_a_test_that_opens_a_root_stack_file_fails() -> None:
    with pytest.raises(ReadExampleStack, match="stack_file"):
        (ROOT / "Pulumi.v100.yaml").read_text(encoding="utf-8")
    with pytest.raises(ReadExampleStack):  # a stack the user added, too
        open(ROOT / "Pulumi.my-own-stack.yaml", encoding="utf-8")  # noqa: SIM115
    assert stack_file("v100").read_text(encoding="utf-8")


def _copy_repository(to: Path) -> Path:
    """The repository without its root stack files (this process may not read them: the guard)."""
    def ignored(where: str, names: list[str]) -> list[str]:
        return [n for n in names if n in NOT_COPIED or is_example_stack(f"{where}/{n}")]

    shutil.copytree(ROOT, to, ignore=ignored, symlinks=True)
    return to


def test_editing_every_example_stack_leaves_the_tests_green(tmp_path: Path) -> None:
    """What a newcomer does first (README: point model.hostPath at the weights), and worse: every
    root stack file rewritten, one broken outright. The tests that read the most stacks, run on
    that copy of the repository, still pass (~3 s: one pytest process)."""
    repo = _copy_repository(tmp_path / "repo")
    for name in SHIPPED_STACKS:  # the examples as a user leaves them (from the tests' copies)
        text = stack_file(name).read_text(encoding="utf-8")
        (repo / f"Pulumi.{name}.yaml").write_text(
            text.replace("hostPath: /", "hostPath: /srv/my-weights/") + "\n# my notes\n", encoding="utf-8")
    (repo / "Pulumi.local.yaml").write_text("config: {vllm-serving:hardware: {gpu: RTX-9999}}\n", encoding="utf-8")
    (repo / "Pulumi.mine.yaml").write_text("not: [a stack\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "no:hypothesispytest",
                           *EDITED_RUN], cwd=repo, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
