"""One exit-code policy across verbs (cli/exits.py): 0 ok, 1 findings, 2 input a verb cannot use;
errors as JSON under --json; each verb's own usage on a bad flag; a missing stack gets the closest
names and `vllm-stack init`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.cli import main

# Every verb that reads a STACK argument, with what else it needs to run.
STACK_VERBS = {
    "plan": [], "check": [], "capacity": [], "render": ["--format", "k8s"], "smoke": ["--base-url", "http://127.0.0.1:9/v1"],
    "calibrate": ["-"],
}


def run(capsys: pytest.CaptureFixture[str], *argv: str, project: Path = PROJECT_DIR) -> tuple[int, str, str]:
    code = main(["--project-dir", str(project), *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("verb", [*STACK_VERBS, "diff"])
def test_a_missing_stack_exits_2_with_the_closest_name_and_init(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [verb, "v10", *STACK_VERBS.get(verb, [])] if verb != "diff" else ["diff", "v100", "v10"]
    code, out, err = run(capsys, *argv)
    text = out + err  # check prints findings as its output; the others on stderr
    assert code == 2, text
    assert "did you mean v100" in text and "vllm-stack init v10" in text
    assert "pulumi stack init" not in text and "Traceback" not in text


@pytest.mark.parametrize("verb", [v for v in STACK_VERBS if v not in ("render", "check")] + ["diff"])
def test_under_json_an_error_is_json_on_stdout(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    """(check --json prints each stack's findings, an unreadable one's too: its normal output.)"""
    argv = [verb, "v10", *STACK_VERBS.get(verb, []), "--json"] if verb != "diff" else ["diff", "v100", "v10", "--json"]
    code, out, err = run(capsys, *argv)
    assert code == 2
    data = json.loads(out)
    assert data["verb"] == verb and "Pulumi.v10.yaml" in data["error"]
    assert [f["code"] for f in data["findings"]] == ["stack-file"]
    assert "no such stack file" in err  # and a log that captures stdout still shows it


@pytest.mark.parametrize("verb", ["init", "plan", "check", "capacity", "render", "diff", "gpus", "models", "smoke",
                                  "affected", "calibrate"])
def test_a_bad_flag_gets_the_verbs_own_usage(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([verb, "--no-such-flag"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: vllm-stack {verb} "), err
    assert "unrecognized arguments: --no-such-flag" in err or "required" in err


def test_a_bad_flag_under_json_is_json(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["plan", "v100", "--max-model-len", "8k", "--json"])
    assert stop.value.code == 2
    data = json.loads(capsys.readouterr().out)
    assert data["verb"] == "plan" and data["usage"].startswith("usage: vllm-stack plan")


def test_a_bad_flag_and_a_missing_stack_read_alike_under_json(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/cli.md: {"verb": ..., "error": ..., "findings": [...]} for every error, laid out as every
    # other --json output (two-space indents), a bad flag's with its usage besides
    with pytest.raises(SystemExit):
        main(["plan", "v100", "--max-model-len", "8k", "--json"])
    bad_flag = capsys.readouterr().out
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "no-such-stack", "--json"]) == 2
    missing = capsys.readouterr().out
    for out in (bad_flag, missing):
        data = json.loads(out)
        assert out == json.dumps(data, indent=2) + "\n"
        assert [k for k in data if k != "usage"] == ["verb", "error", "findings"]
    assert json.loads(bad_flag)["findings"] == [] and "unrecognized arguments: --max-model-len 8k" in bad_flag


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A project whose stack has a config error (a GPU the catalog lacks) but reads fine."""
    (tmp_path / "Pulumi.yaml").write_text((PROJECT_DIR / "Pulumi.yaml").read_text())
    text = stack_file("v100").read_text().replace("gpu: V100-32GB", "gpu: V100-32G")
    (tmp_path / "Pulumi.bad.yaml").write_text(text)
    (tmp_path / "Pulumi.v100.yaml").write_text(stack_file("v100").read_text())
    return tmp_path


@pytest.mark.parametrize(("argv", "code"), [
    (["check", "bad"], 1), (["plan", "bad"], 1), (["render", "bad"], 1), (["capacity", "bad"], 1),
    (["diff", "v100", "bad"], 2),  # diff(1): 1 means "different"; a stack with errors has no deployment to compare
    (["calibrate", "bad", "-"], 2),  # 1 means "outside the error band"
])
def test_a_stack_with_errors_exits_1(broken: Path, argv: list[str], code: int,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    found, out, err = run(capsys, *argv, project=broken)
    assert found == code, err
    assert "gpu-unknown vllm-serving:hardware.gpu" in out + err


def test_an_unreadable_stack_exits_2_in_every_verb(broken: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (broken / "Pulumi.garbled.yaml").write_text("config: [unclosed\n")
    for argv in (["check", "garbled"], ["plan", "garbled"], ["render", "garbled"], ["capacity", "garbled"],
                 ["diff", "v100", "garbled"]):
        code, out, err = run(capsys, *argv, project=broken)
        assert code == 2 and "is not valid YAML" in out + err, argv


def test_a_stack_file_past_the_size_cap_cannot_be_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # read no further than the cap (256 KiB, stack_files/strict_yaml.py): the file is not a stack, exit 2
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    (tmp_path / "Pulumi.big.yaml").write_text("config:\n" + "# padding\n" * 30_000, encoding="utf-8")
    code, out, _ = run(capsys, "check", "big", project=tmp_path)
    assert code == 2 and "stack-file-too-large" in out


def test_a_json_error_of_several_findings_names_each_in_its_error_line(broken: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # `diff` cannot compare a stack with errors: its JSON error says every finding in `error`, so a
    # CI log that shows only that field still says what to fix; two misspelt keys make two findings
    text = (broken / "Pulumi.bad.yaml").read_text().replace("count: 8", "count: 8\n    countt: 8")
    (broken / "Pulumi.bad.yaml").write_text(text)
    code, out, _ = run(capsys, "diff", "v100", "bad", "--json", project=broken)
    said = json.loads(out)
    assert code == 2 and len(said["findings"]) >= 2
    assert said["error"].split("; ") == [f"{f['key']}: {f['message']}" for f in said["findings"]]


def test_no_verb_is_a_usage_error_naming_what_is_missing(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: vllm-stack [-h] [--version] [--project-dir DIR] COMMAND ...")
    assert err.rstrip().endswith("error: the following arguments are required: COMMAND")
