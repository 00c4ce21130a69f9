"""Changed paths -> the stacks whose preview they can alter."""

from __future__ import annotations

import pytest

from vllm_serving.views.affected_stacks import affected_stacks, stack_of

STACKS = ["a100", "a100-k8s", "v100", "v100-prod", "v100-staging"]


@pytest.mark.parametrize("path", [
    "vllm_serving/settings/engine.py", "vllm_serving/rules/precision.py", "components/docker/vllm_server.py",
    "__main__.py",
    "Pulumi.yaml", "pyproject.toml", "uv.lock",
])
def test_program_change_affects_every_stack(path: str) -> None:
    assert affected_stacks([path, "README.md"], STACKS) == STACKS


def test_stack_file_change_affects_that_stack_only() -> None:
    assert affected_stacks(["Pulumi.v100.yaml", "Pulumi.a100-k8s.yaml"], STACKS) == ["a100-k8s", "v100"]


@pytest.mark.parametrize("paths", [
    [], ["README.md"], ["docs/rules.md"], ["tests/core/test_rules.py"], [".github/workflows/preview.yml"],
    ["benchmarks/startup.py"], ["Makefile"],
    # the CLI and its offline views are not part of what `pulumi preview` runs
    ["vllm_serving/cli/render.py"], ["vllm_serving/views/plan.py"], ["vllm_serving/smoke/__init__.py"],
    ["vllm_serving/scaffold/stack_text.py"],
    # fixtures named like stack files but not beside Pulumi.yaml are not stacks
    ["tests/safety/bad_configs/Pulumi.image-latest.yaml"],
])
def test_docs_tests_and_ci_affect_no_stack(paths: list[str]) -> None:
    assert affected_stacks(paths, STACKS) == []


def test_deleted_stack_file_is_not_previewed() -> None:
    # git lists the deleted file, but HEAD has no such stack any more
    assert affected_stacks(["Pulumi.v100-old.yaml", "Pulumi.a100.yaml"], STACKS) == ["a100"]


def test_promotion_source_change_does_not_pull_in_the_promoted_stack() -> None:
    # v100-prod promotes from v100-staging's deployed outputs, not from its file
    assert affected_stacks(["Pulumi.v100-staging.yaml"], STACKS) == ["v100-staging"]


def test_program_change_never_invents_a_stack() -> None:
    assert affected_stacks(["components/program.py", "Pulumi.gone.yaml"], ["v100"]) == ["v100"]


@pytest.mark.parametrize(("path", "stack"), [
    ("Pulumi.v100.yaml", "v100"), ("Pulumi.v100-prod.yaml", "v100-prod"),
    ("Pulumi.yaml", None), ("Pulumi.v100.yml", None), ("sub/Pulumi.v100.yaml", None),
    ("README.md", None),
])
def test_stack_of(path: str, stack: str | None) -> None:
    assert stack_of(path) == stack


def test_cli_only_folders_are_never_imported_by_the_program() -> None:
    """What makes a CLI-only change safe to skip: the program cannot import those folders."""
    import subprocess
    import sys

    from vllm_serving.views.affected_stacks import CLI_ONLY_DIRS

    prefixes = tuple(d.rstrip("/").replace("/", ".") for d in CLI_ONLY_DIRS)
    code = ("import sys, components.program;"
            f"bad = [m for m in sys.modules if m.startswith({prefixes!r})];"
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
