"""The verbs read as a newcomer expects: render's default format, plan without unset values,
diff of an inline architecture, --version, and affected with uncommitted changes."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.git_repo import commit, git
from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.catalog.models import MODELS
from vllm_serving.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["--project-dir", str(PROJECT_DIR), *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(("stack", "fmt"), [("v100", "docker-run"), ("a100-k8s", "k8s")])
def test_render_defaults_to_the_stacks_own_backend(stack: str, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["render", stack], capsys)
    assert code == 0 and f"rendering as {fmt}" in err
    assert (code, out) == run(["render", stack, "--format", fmt], capsys)[:2]


BLOCK_TITLES = ("Mounts", "Ports", "Endpoints", "vLLM argv", "Env", "Capacity", "Findings",
                "Resources `pulumi up` would create")


@pytest.mark.parametrize("stack", ["v100", "a100", "a100-k8s", "v100-prod"])
def test_plan_prints_no_unset_value_and_no_empty_header(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["plan", stack], capsys)
    assert code == 0
    assert "None" not in out
    lines = out.splitlines()
    titles = [i for i, line in enumerate(lines) if line.removeprefix("  ") in BLOCK_TITLES]
    assert titles
    for i in titles:  # a block title is followed by its rows, indented deeper
        assert i + 1 < len(lines) and lines[i + 1].startswith("    "), lines[i]


def test_plan_leaves_out_an_empty_env(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    text = (stack_file("v100")).read_text()
    cut = text.replace('    env:\n      VLLM_USE_MODELSCOPE: "false"\n', "")
    assert cut != text
    (tmp_path / "Pulumi.bare.yaml").write_text(cut)
    assert main(["--project-dir", str(tmp_path), "plan", "bare"]) == 0
    assert "  Env" not in capsys.readouterr().out
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "v100"]) == 0
    assert "  Env\n    VLLM_USE_MODELSCOPE=false" in capsys.readouterr().out


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"vllm-stack {importlib.metadata.version('vllm-serving')}\n"


def _inline_stack(project: Path, name: str, **changes: object) -> None:
    """v100 with its model described inline instead of by catalog name, facts changed as given."""
    facts = MODELS["Qwen3.5-27B"].model_dump(by_alias=True, exclude_none=True) | changes
    data = yaml.safe_load((stack_file("v100")).read_text())
    model = data["config"]["vllm-serving:model"]
    del model["name"]
    model["architecture"] = facts
    (project / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(data))


def test_diff_shows_a_change_to_an_inline_architecture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    _inline_stack(tmp_path, "before")
    _inline_stack(tmp_path, "after", maxPositionEmbeddings=131072)
    assert main(["--project-dir", str(tmp_path), "diff", "before", "after", "--json"]) == 1
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert {"section": "model", "key": "architecture.maxPositionEmbeddings", "a": "262144", "b": "131072",
            "kind": "changed"} in changes
    assert main(["--project-dir", str(tmp_path), "diff", "before", "before"]) == 0


STACK_TEXT = "config:\n  vllm-serving:hardware:\n    gpu: V100-32GB\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "--quiet")
    (tmp_path / "Pulumi.yaml").write_text("name: vllm-serving\nruntime: python\n")
    for stack in ("v100", "a100"):
        (tmp_path / f"Pulumi.{stack}.yaml").write_text(STACK_TEXT)
    commit(tmp_path, "base")
    (tmp_path / "README.md").write_text("docs\n")
    commit(tmp_path, "docs only")
    return tmp_path


def affected(repo: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> list[str]:
    assert main(["--project-dir", str(repo), "affected", "--base", "HEAD~1", "--json", *extra]) == 0
    stacks: list[str] = json.loads(capsys.readouterr().out)
    return stacks


def test_affected_counts_uncommitted_changes_when_asked(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "Pulumi.v100.yaml").write_text(STACK_TEXT + "# edited, not committed\n")
    (repo / "Pulumi.a100.yaml").write_text(STACK_TEXT + "# edited and staged\n")
    git(repo, "add", "Pulumi.a100.yaml")
    (repo / "Pulumi.new.yaml").write_text(STACK_TEXT)  # untracked
    assert affected(repo, capsys) == []
    assert affected(repo, capsys, "--include-uncommitted") == ["a100", "new", "v100"]


def test_uncommitted_changes_add_to_the_committed_ones(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a branch with a commit and an edit on top: the preview must cover both stacks, not only the edit
    (repo / "Pulumi.v100.yaml").write_text(STACK_TEXT + "# committed\n")
    commit(repo, "tune v100")
    (repo / "Pulumi.a100.yaml").write_text(STACK_TEXT + "# edited, not committed\n")
    assert affected(repo, capsys) == ["v100"]
    assert affected(repo, capsys, "--include-uncommitted") == ["a100", "v100"]


def test_affected_ignores_untracked_files_git_ignores(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".gitignore").write_text("Pulumi.scratch.yaml\n")
    commit(repo, "ignore scratch")
    (repo / "Pulumi.scratch.yaml").write_text(STACK_TEXT)
    assert main(["--project-dir", str(repo), "affected", "--base", "HEAD~1", "--json", "--include-uncommitted"]) == 0
    assert json.loads(capsys.readouterr().out) == []
