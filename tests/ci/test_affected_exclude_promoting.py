"""The PR preview matrix never holds a production stack: `affected --exclude-promoting`, run as
preview.yml runs it, on a git repository made of the shipped stack files."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest
import yaml

from tests.git_repo import commit, git
from tests.paths import PROJECT_DIR, ROOT, SHIPPED_STACK_FILES
from vllm_serving.cli import main

STACK_FILES = list(SHIPPED_STACK_FILES)


def promoting(path: Path) -> bool:
    config = yaml.safe_load(path.read_text(encoding="utf-8"))["config"]
    return bool((config.get("vllm-serving:release") or {}).get("promoteFrom"))


def workflow_arguments(base: str) -> list[str]:
    """The `vllm-stack affected ...` arguments of preview.yml's affected step, $BASE_SHA filled in."""
    text = (ROOT / ".github" / "workflows" / "preview.yml").read_text(encoding="utf-8")
    match = re.search(r"uv run --frozen vllm-stack (affected [^)]*)\)", text)
    assert match
    return [base if word == "$BASE_SHA" else word for word in shlex.split(match[1])]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The shipped project's stack files and a program file, in one commit."""
    git(tmp_path, "init", "--quiet")
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    for path in STACK_FILES:
        shutil.copy(path, tmp_path)
    (tmp_path / "components").mkdir()
    (tmp_path / "components" / "program.py").write_text("X = 1\n")
    commit(tmp_path, "base")
    return tmp_path


def preview_matrix(repo: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["--project-dir", str(repo), *workflow_arguments("HEAD~1")]) == 0
    stacks: list[str] = json.loads(capsys.readouterr().out)
    return stacks


def test_the_shipped_stacks_include_a_promoting_one() -> None:
    assert any(promoting(path) for path in STACK_FILES)  # else the tests below prove nothing


def test_code_change_previews_every_stack_but_production(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "components" / "program.py").write_text("X = 2\n")
    commit(repo, "code")
    expected = sorted(path.name[len("Pulumi."):-len(".yaml")] for path in STACK_FILES if not promoting(path))
    assert preview_matrix(repo, capsys) == expected
    assert "v100-staging" in expected and "v100-prod" not in expected


def test_production_file_change_previews_nothing(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prod = next(path.name for path in STACK_FILES if promoting(path))
    (repo / prod).write_text((repo / prod).read_text() + "# tuned\n")
    commit(repo, "tune prod")
    assert preview_matrix(repo, capsys) == []
    assert main(["--project-dir", str(repo), "affected", "--base", "HEAD~1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [prod[len("Pulumi."):-len(".yaml")]]  # the flag did it


def test_unreadable_promotion_is_an_error_naming_the_key(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "Pulumi.v100-staging.yaml").write_text(
        "config:\n  vllm-serving:release:\n    promoteFrom: v100\n")  # not ORG/vllm-serving/STACK
    commit(repo, "bad promoteFrom")
    assert main(["--project-dir", str(repo), *workflow_arguments("HEAD~1")]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"].startswith("vllm-serving:release.promoteFrom")  # --json: no list
    assert "vllm-serving:release.promoteFrom" in captured.err  # and the CI log shows it
