"""`vllm-stack smoke STACK`: exit codes, the table and JSON views, the key never printed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from msgspec.structs import replace

from tests.paths import PROJECT_DIR, stack_file
from tests.smoke.conftest import KEY, StartServer
from tests.smoke.verb import smoke_verb
from vllm_serving.smoke.expectations import Expectations, expectations_from_spec
from vllm_serving.stack_files.loader import load_spec


def _project(tmp_path: Path, base_url: str | None = None, api_key: bool = False) -> Path:
    """A copy of the v100 stack; with `base_url`, its network section points there (loopback only)."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    doc: dict[str, Any] = yaml.safe_load((stack_file("v100")).read_text())
    if base_url is not None:
        port = urlsplit(base_url).port
        doc["config"]["vllm-serving:network"] = {"hostPort": port, "bindAddress": "127.0.0.1"}
    if api_key:
        doc["config"]["vllm-serving:apiKey"] = {"secure": "AAABAG5vdC1hLW5vbmNlIW5vdC1hLXJlYWwtdGFnISFrZXk="}
    (tmp_path / "Pulumi.v100.yaml").write_text(yaml.safe_dump(doc))
    return tmp_path


def test_expectations_come_from_the_resolved_stacks() -> None:
    v100 = expectations_from_spec(load_spec(stack_file("v100"), "v100", PROJECT_DIR))
    a100 = expectations_from_spec(load_spec(stack_file("a100"), "a100", PROJECT_DIR))
    assert replace(v100, kv_cache=None) == Expectations("qwen3.5-27b", 8192, reasoning=True, tool_calling=True,
                                                        api_key=False)
    # no servedName: vLLM serves the model under its path
    assert replace(a100, kv_cache=None) == Expectations("/Qwen3.6-27B-FP8", 262144, reasoning=True,
                                                        tool_calling=True, api_key=False)
    assert v100.kv_cache is not None and v100.kv_cache.max_model_len == 8192


def test_all_pass_exits_0_with_one_timed_row_per_check(
        tmp_path: Path, start_server: StartServer, capsys: pytest.CaptureFixture[str]) -> None:
    url = start_server()
    assert smoke_verb(_project(tmp_path, url), "v100") == 0  # the stack's own baseUrl, 127.0.0.1:PORT
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()[2:-1]]
    assert [(r[0], r[1]) for r in rows] == [("health", "pass"), ("models", "pass"), ("chat", "pass"),
                                            ("reasoning", "pass"), ("tool-call", "pass"),
                                            ("api-key", "skip"), ("metrics", "pass"), ("kv-cache", "pass")]
    assert all(r[2].endswith("s") for r in rows if r[1] == "pass")
    assert out.splitlines()[0] == f"smoke v100 against {url}"
    assert out.splitlines()[-1] == "  7/7 passed"


def test_a_failing_check_exits_1_and_json_says_which(
        tmp_path: Path, start_server: StartServer, capsys: pytest.CaptureFixture[str]) -> None:
    url = start_server(served_names=["other"])
    assert smoke_verb(_project(tmp_path), "v100", "--base-url", url, "--json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["baseUrl"] == url
    assert {c["name"]: c["status"] for c in doc["checks"]} == {
        "health": "pass", "models": "fail", "chat": "fail", "reasoning": "fail", "tool-call": "fail",
        "api-key": "skip", "metrics": "pass", "kv-cache": "pass"}
    assert all(isinstance(c["seconds"], float) for c in doc["checks"])


def test_the_api_key_comes_from_the_environment_and_is_never_printed(
        tmp_path: Path, start_server: StartServer, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    url = start_server(api_key=KEY)
    project = _project(tmp_path, api_key=True)
    monkeypatch.setenv("VLLM_SERVING_SECRET_APIKEY", KEY)
    assert smoke_verb(project, "v100", "--base-url", url) == 0
    monkeypatch.setenv("VLLM_SERVING_SECRET_APIKEY", KEY + "-wrong")
    assert smoke_verb(project, "v100", "--base-url", url, "--json") == 1
    out, err = capsys.readouterr()
    assert "api-key" in out and KEY not in out + err


def test_a_hanging_server_fails_within_the_timeout(
        tmp_path: Path, start_server: StartServer, capsys: pytest.CaptureFixture[str]) -> None:
    url = start_server(faults={"/health": "hang"})
    assert smoke_verb(_project(tmp_path), "v100", "--base-url", url, "--timeout", "0.3") == 1
    assert "no answer within 0.3s (timeout)" in capsys.readouterr().out


@pytest.mark.parametrize("stack_text, named, code", [
    (None, "no such stack file", 2),  # unreadable: 2, as in every verb (cli/exits.py)
    ("config: [unclosed\n", "is not valid YAML", 2),
    ("config:\n  vllm-serving:engine:\n    maxModelLen: 8k\n", "vllm-serving:engine.maxModelLen", 1),  # findings
])
def test_a_stack_smoke_cannot_use_exits_naming_the_problem(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], stack_text: str | None, named: str, code: int) -> None:
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    if stack_text is not None:
        (tmp_path / "Pulumi.broken.yaml").write_text(stack_text)
    assert smoke_verb(tmp_path, "broken", "--base-url", "http://127.0.0.1:9/v1") == code
    out, err = capsys.readouterr()
    assert out == ""
    assert named in err


@pytest.mark.parametrize("argv", [["--base-url", "gpu-host:8000"], ["--timeout", "0"], ["--timeout", "x"]])
def test_bad_options_are_refused_by_the_parser(tmp_path: Path, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        smoke_verb(_project(tmp_path), "v100", *argv)
    assert exc.value.code == 2
