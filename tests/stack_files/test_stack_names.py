"""A stack name enters from a STACK argument, a stack file's name or `init NAME`; wherever it
enters it is checked as Pulumi checks it (`^[A-Za-z0-9_.-]{1,100}$`) before it can reach a file
name, a render or a PromQL matcher."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.paths import PROJECT_DIR, stack_file
from tests.stack_builders import shipped_settings
from vllm_serving.cli import main
from vllm_serving.findings import ConfigError
from vllm_serving.spec import resolve
from vllm_serving.stack_files.loader import load_spec

BAD = ["a b", "x\ny", "a:b", "a/b", "", "v100\n", "é", "a" * 101, "$(id)", 'q"', "a#b", "{x}"]
PULUMI_NAME = st.text(st.sampled_from("abcXYZ019_.-"), min_size=1, max_size=100)


@pytest.mark.parametrize("name", BAD)
def test_a_name_pulumi_refuses_is_refused_before_any_render(name: str) -> None:
    with pytest.raises(ConfigError) as refused:
        resolve(shipped_settings("v100"), name)
    assert [f.code for f in refused.value.findings] == ["stack-name-invalid"]


@settings(max_examples=50, deadline=None)
@given(PULUMI_NAME)
def test_every_name_pulumi_takes_is_taken(name: str) -> None:
    assert resolve(shipped_settings("v100"), name).stack == name


@pytest.mark.parametrize("name", ["a b", "x\ny: 1", "a:b", "$(id)", 'q"z', "a#b"])
def test_a_stack_file_whose_name_is_no_stack_name_is_refused(tmp_path: Path, name: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    path = tmp_path / f"Pulumi.{name}.yaml"
    shutil.copy(stack_file("v100"), path)
    with pytest.raises(ConfigError) as refused:
        load_spec(path, project_dir=tmp_path)
    assert refused.value.findings[0].code == "stack-name-invalid"
    for argv in (["check"], ["render", str(path), "--format", "alerts"],
                 ["render", str(path), "--format", "prometheus"]):
        assert main(["--project-dir", str(tmp_path), *argv]) == 1
        out = capsys.readouterr()
        assert "stack-name-invalid" in out.out + out.err and "groups" not in out.out


@pytest.mark.parametrize("name", ["a b", "x\nkey: 1", "v100\n"])
def test_init_refuses_such_a_name(tmp_path: Path, name: str) -> None:
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    assert main(["--project-dir", str(tmp_path), "init", name, "--gpu", "A100-80GB", "--count", "2",
                 "--model", "Qwen3.5-27B"]) == 2
    assert list(tmp_path.glob("Pulumi.*.yaml")) == []


def test_renders_of_a_valid_name_hold_it_only_as_a_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A name Pulumi takes - dots, a leading digit, `true`-like - stays one value in the alert rules."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    for name in ("1.5", "true", "...", "_x-"):
        shutil.copy(stack_file("v100"), tmp_path / f"Pulumi.{name}.yaml")
        assert main(["--project-dir", str(tmp_path), "render", name, "--format", "alerts"]) == 0
        rules = yaml.safe_load(capsys.readouterr().out)["groups"][0]["rules"]
        assert {rule["labels"]["stack"] for rule in rules} == {name}
