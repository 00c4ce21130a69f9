"""Every verb that takes a stack takes its file's path too, and reads it the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_serving.cli import main

VERBS = (["plan"], ["plan", "--json"], ["render", "--format", "compose"], ["render"], ["check"],
         ["capacity"], ["capacity", "--json"])


def output(project: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["--project-dir", str(project), *argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
@pytest.mark.parametrize("form", ["Pulumi.v100.yaml", "./Pulumi.v100.yaml", "absolute", "Pulumi.v100.yml"])
def test_a_path_reads_as_the_name(project: Path, verb: list[str], form: str, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(project)
    by_name = output(project, [verb[0], "v100", *verb[1:]], capsys)
    if form.endswith(".yml"):  # YAML's other suffix, as an editor may save it
        (project / form).write_text((project / "Pulumi.v100.yaml").read_text())
    path = str(project / "Pulumi.v100.yaml") if form == "absolute" else form
    assert output(project, [verb[0], path, *verb[1:]], capsys) == by_name


def test_diff_takes_paths(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(project)
    by_name = output(project, ["diff", "v100", "a100"], capsys)
    assert by_name[0] == 1
    assert output(project, ["diff", "./Pulumi.v100.yaml", str(project / "Pulumi.a100.yaml")], capsys) == by_name


@pytest.mark.parametrize("verb", [["plan"], ["render"], ["smoke"], ["diff", "v100"]], ids=" ".join)
def test_a_missing_file_is_named_as_given(project: Path, verb: list[str], monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(project)
    assert main(["--project-dir", str(project), *verb, "./Pulumi.nope.yaml"]) in (1, 2)
    err = capsys.readouterr().err
    assert "Pulumi.nope.yaml: no such stack file" in err and "Pulumi.Pulumi" not in err


@pytest.mark.parametrize("verb", [["plan", "--json"], ["capacity", "--json"], ["render"]], ids=" ".join)
def test_a_stack_file_elsewhere_takes_the_project_directorys_defaults(
        project: Path, verb: list[str], tmp_path_factory: pytest.TempPathFactory,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Pulumi.yaml's defaults come from --project-dir, as `pulumi preview --config-file PATH` takes
    # them: a stack file kept in another directory reads as the same file in the project
    import yaml

    doc = yaml.safe_load((project / "Pulumi.v100.yaml").read_text())
    del doc["config"]["vllm-serving:image"]  # the project's default image (Pulumi.yaml) applies
    (project / "Pulumi.v100.yaml").write_text(yaml.safe_dump(doc))
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "Pulumi.v100.yaml"
    elsewhere.write_text(yaml.safe_dump(doc))
    by_name = output(project, [verb[0], "v100", *verb[1:]], capsys)
    assert by_name[0] in (0, 1) and "0.19.1" in by_name[1]
    assert output(project, [verb[0], str(elsewhere), *verb[1:]], capsys) == by_name
