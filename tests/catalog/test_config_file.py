"""`model.configFile`: a model's config.json as its architecture, for the CLI and the program alike;
a wrong file fails with the key, the path and what is missing, before any resource."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from tests.paths import FIXTURES, PROJECT_DIR, ROOT, stack_file
from tests.pulumi_harness import ProgramFailed, run_program, stack_config
from vllm_serving.catalog.hf_config import load_hf_config
from vllm_serving.cli import main

QWEN3_5 = FIXTURES / "hf" / "qwen3.5-27b.config.json"
KEY = "vllm-serving:model.configFile"
RELATIVE = "models/Qwen3.5-27B/config.json"


def _project(tmp_path: Path, model: dict[str, Any], config_json: str | None = None) -> Path:
    """The shipped v100 stack in a project of its own, its model section replaced."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    stack = yaml.safe_load((stack_file("v100")).read_text(encoding="utf-8"))
    section = stack["config"]["vllm-serving:model"]
    section.pop("name")
    section.update(model)
    (tmp_path / "Pulumi.v100.yaml").write_text(yaml.safe_dump(stack), encoding="utf-8")
    if config_json is not None:
        target = tmp_path / RELATIVE
        target.parent.mkdir(parents=True)
        target.write_text(config_json, encoding="utf-8")
    return tmp_path


def _plan(capsys: pytest.CaptureFixture[str], project: Path) -> tuple[int, dict[str, Any] | None, str]:
    """(exit code, the plan, the findings as `check` prints them); under --json both are JSON on stdout."""
    code = main(["--project-dir", str(project), "plan", "v100", "--json"])
    data = json.loads(capsys.readouterr().out)
    if code == 0:
        return code, data, ""
    return code, None, "\n".join(f"{f['severity'].upper()} {f['code']} {f['key']}: {f['message']} - {f['fix']}"
                                  for f in data["findings"])


def test_cli_plans_a_stack_from_its_config_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path, {"configFile": RELATIVE}, QWEN3_5.read_text(encoding="utf-8"))
    code, plan, err = _plan(capsys, project)
    assert code == 0, err
    assert plan is not None
    model = plan["model"]
    assert model["architecture"] == "Qwen3_5ForConditionalGeneration"
    assert model["paramsBillion"] == load_hf_config(QWEN3_5).params_billion


def test_cli_check_accepts_the_same_stack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path, {"configFile": RELATIVE}, QWEN3_5.read_text(encoding="utf-8"))
    assert main(["--project-dir", str(project), "check", "v100"]) == 0, capsys.readouterr()


def test_missing_file_names_the_key_and_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _plan(capsys, _project(tmp_path, {"configFile": RELATIVE}))
    assert code == 1
    assert f"ERROR model-config-invalid {KEY}: {tmp_path / RELATIVE}: no such file" in err


@pytest.mark.parametrize(("content", "says"), [
    ('{"architectures": ["LlamaForCausalLM"], "model_type": "llama"}', "has no 'num_hidden_layers'"),
    ('{"_name_or_path": "a tokenizer config"}', "has no 'model_type'"),
    ("[1, 2]", "is not a JSON object"),
    ("{not json", "is not a readable JSON file"),
])
def test_a_file_that_is_no_model_config_says_what_is_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, says: str) -> None:
    code, _, err = _plan(capsys, _project(tmp_path, {"configFile": RELATIVE}, content))
    assert code == 1
    assert KEY in err and says in err


def _qwen3_5_with(**text_config: Any) -> str:
    config = json.loads(QWEN3_5.read_text(encoding="utf-8"))
    config["text_config"].update(text_config)
    return json.dumps(config)


@pytest.mark.parametrize(("text_config", "says", "change"), [
    ({"num_attention_heads": -3}, "num_attention_heads is -3: input should be greater than or equal to 1",
     "correct num_attention_heads in the config.json"),
    ({"linear_num_value_heads": 0}, "linear_num_value_heads is 0: input should be greater than or equal to 1",
     "correct linear_num_value_heads in the config.json"),
    ({"num_key_value_heads": 5}, "num_attention_heads (24) must be a multiple of num_key_value_heads (5)",
     "correct num_attention_heads and num_key_value_heads in the config.json"),
])
def test_a_refused_value_names_the_config_json_key_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text_config: dict[str, Any], says: str,
        change: str) -> None:
    """The key as config.json spells it, its value and what to change; and no second error that
    asks for a model.name the stack rightly does not give."""
    code, _, err = _plan(capsys, _project(tmp_path, {"configFile": RELATIVE}, _qwen3_5_with(**text_config)))
    assert code == 1
    assert err.splitlines() == [err.splitlines()[0]]
    assert f"ERROR model-config-invalid {KEY}: {tmp_path / RELATIVE}: {says} - {change}" in err
    assert "validation error" not in err


def test_a_refused_value_is_quoted_short(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _plan(capsys, _project(tmp_path, {"configFile": RELATIVE},
                                          _qwen3_5_with(max_position_embeddings=-10**400)))
    assert code == 1
    assert "max_position_embeddings is -10000000000000000...0000000000000000000: input should be" in err
    assert len(err) < 600


def test_exactly_one_way_to_name_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path, {"configFile": RELATIVE, "name": "Qwen3.5-27B"}, QWEN3_5.read_text(encoding="utf-8"))
    code, _, err = _plan(capsys, project)
    assert code == 1
    assert "exactly one of model.name, model.architecture and model.configFile" in err


def _program_config(config_file: str) -> dict[str, Any]:
    config = stack_config(stack_file("v100"))
    model = dict(config["vllm-serving:model"])
    model.pop("name")
    config["vllm-serving:model"] = {**model, "configFile": config_file}
    return config


def test_program_reads_it_from_the_project_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # Pulumi runs the program in the project directory
    run = run_program(_program_config(str(QWEN3_5.relative_to(ROOT))), stack="v100",
                      secrets={"registryPassword": "pw"})
    assert run.resources
    assert run.outputs["capacity"]["model"] == "Qwen3_5ForConditionalGeneration"


def test_program_refuses_a_missing_file_before_any_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(ProgramFailed) as failed:
        run_program(_program_config("models/absent/config.json"), stack="v100", secrets={"registryPassword": "pw"})
    assert isinstance(failed.value.error, pulumi.RunError)
    assert KEY in str(failed.value) and "models/absent/config.json: no such file" in str(failed.value)
    assert failed.value.resources == []


@pytest.mark.parametrize("path", ["/etc/model/config.json", "../other/config.json", "models/.hidden/config.json",
                                  "models/config.yaml"])
def test_only_a_json_file_inside_the_project(tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str) -> None:
    """Every checkout of the project reads the same file: no absolute paths, no way out of it."""
    code, _, err = _plan(capsys, _project(tmp_path, {"configFile": path}))
    assert code == 1
    assert f"{KEY}: {path!r} is not a .json path inside the project" in err
