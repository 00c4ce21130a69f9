"""`vllm-stack affected --base REF` against a real git repository made in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vllm_serving.cli
from tests.git_repo import commit, git
from vllm_serving.cli import main

STACK_TEXT = "config:\n  vllm-serving:hardware:\n    gpu: V100-32GB\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project with four stacks (v100-prod promotes from v100-staging), code and docs: one commit."""
    git(tmp_path, "init", "--quiet")
    (tmp_path / "Pulumi.yaml").write_text("name: vllm-serving\nruntime: python\n")
    for stack in ("v100", "v100-staging", "a100"):
        (tmp_path / f"Pulumi.{stack}.yaml").write_text(STACK_TEXT)
    (tmp_path / "Pulumi.v100-prod.yaml").write_text(
        STACK_TEXT + "  vllm-serving:release:\n    promoteFrom: organization/vllm-serving/v100-staging\n")
    (tmp_path / "components").mkdir()
    (tmp_path / "components" / "program.py").write_text("X = 1\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "rules.md").write_text("# rules\n")
    commit(tmp_path, "base")
    return tmp_path


def affected(repo: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> list[str]:
    assert main(["--project-dir", str(repo), "affected", "--base", "HEAD~1", "--json", *extra]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one line: what $GITHUB_OUTPUT takes
    stacks: list[str] = json.loads(out)
    return stacks


def test_stack_file_change(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "Pulumi.v100.yaml").write_text(STACK_TEXT + "# tuned\n")
    commit(repo, "tune v100")
    assert affected(repo, capsys) == ["v100"]


def test_code_change_affects_all(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "components" / "program.py").write_text("X = 2\n")
    commit(repo, "code")
    assert affected(repo, capsys) == ["a100", "v100", "v100-prod", "v100-staging"]


def test_docs_only_change_affects_none(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "docs" / "rules.md").write_text("# rules, reworded\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_x.py").write_text("")
    commit(repo, "docs")
    assert affected(repo, capsys) == []


def test_deleted_and_promoted_stacks_excluded(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "Pulumi.a100.yaml").unlink()
    (repo / "Pulumi.v100-staging.yaml").write_text(STACK_TEXT + "# new image\n")
    commit(repo, "retire a100, bump staging")
    assert affected(repo, capsys) == ["v100-staging"]


def test_three_dot_range_ignores_base_branch_progress(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "--quiet", "-b", "feature")
    (repo / "Pulumi.a100.yaml").write_text(STACK_TEXT + "# feature\n")
    commit(repo, "feature")
    git(repo, "checkout", "--quiet", base)
    (repo / "Pulumi.v100.yaml").write_text(STACK_TEXT + "# landed on main meanwhile\n")
    commit(repo, "main moves on")
    main_tip = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "--quiet", "feature")
    assert main(["--project-dir", str(repo), "affected", "--base", main_tip, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == ["a100"]


def test_text_output_one_stack_per_line(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for stack in ("v100", "a100"):
        (repo / f"Pulumi.{stack}.yaml").write_text(STACK_TEXT + "# change\n")
    commit(repo, "two stacks")
    assert main(["--project-dir", str(repo), "affected", "--base", "HEAD~1"]) == 0
    assert capsys.readouterr().out == "a100\nv100\n"


@pytest.mark.parametrize("base", ["no-such-ref", "--output=/tmp/x"])
def test_bad_base_is_one_line_and_exit_2(repo: Path, base: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(repo), "affected", f"--base={base}"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "vllm-stack affected: " in captured.err and "Traceback" not in captured.err


def test_listed_in_commands() -> None:
    # `vllm-stack affected` exists for users only once vllm_serving/cli/__init__.py lists it
    assert "affected" in vllm_serving.cli.COMMANDS


def test_a_file_name_that_is_no_stack_name_is_no_stack(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`Pulumi.x<newline>v100-prod.yaml` would print as two lines, one of them a production stack."""
    (repo / "Pulumi.x\nv100-prod.yaml").write_text(STACK_TEXT)
    (repo / "components" / "program.py").write_text("X = 2\n")
    commit(repo, "code and an odd file")
    assert affected(repo, capsys) == ["a100", "v100", "v100-prod", "v100-staging"]
    assert main(["--project-dir", str(repo), "affected", "--base", "HEAD~1", "--exclude-promoting"]) == 0
    assert capsys.readouterr().out.splitlines() == ["a100", "v100", "v100-staging"]


def test_no_stack_affected_is_said_on_stderr(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # stdout stays the list a script reads (empty); a person is told why there is nothing
    (repo / "docs" / "rules.md").write_text("# rules, edited\n")
    commit(repo, "docs")
    assert main(["--project-dir", str(repo), "affected", "--base", "HEAD~1"]) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "vllm-stack: no stack affected since HEAD~1\n")


def test_a_stack_promoting_from_itself_is_refused_when_promoting_stacks_are_left_out(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --exclude-promoting reads release.promoteFrom: a stack that names itself is an error to fix,
    # not a production stack to leave out silently
    (repo / "Pulumi.a100.yaml").write_text(
        STACK_TEXT + "  vllm-serving:release:\n    promoteFrom: organization/vllm-serving/a100\n")
    commit(repo, "a100 promotes from itself")
    assert main(["--project-dir", str(repo), "affected", "--base", "HEAD~1", "--exclude-promoting"]) == 1
    assert "stack a100 promotes from itself" in capsys.readouterr().err


def test_base_is_required(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # what the change is compared with decides every stack's fate: never a silent default
    with pytest.raises(SystemExit) as stop:
        main(["--project-dir", str(repo), "affected"])
    assert stop.value.code == 2
    assert "the following arguments are required: --base" in capsys.readouterr().err


def test_a_ref_git_does_not_know_is_reported_with_gits_own_words(repo: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(repo), "affected", "--base", "no-such-ref"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vllm-stack affected: git diff no-such-ref...HEAD failed: ")
    assert "no-such-ref" in err.split("failed: ", 1)[1]  # git's message names the ref it could not read
