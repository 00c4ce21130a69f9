"""`vllm-stack check`: stacks by name, by path, all of them; text and JSON; exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.paths import PROJECT_DIR, ROOT, stack_file
from vllm_serving.cli import main

INVALID = ROOT / "tests" / "stacks" / "invalid"


def test_all_stacks_clean_of_errors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(project), "check"]) == 0
    out = capsys.readouterr().out
    assert out.index("== a100 ==") < out.index("== v100 ==")
    assert "ERROR" not in out
    assert "WARNING hybrid-triton-below-cc80 vllm-serving:hardware.gpu: " in out
    assert "WARNING api-open-on-network vllm-serving:network.bindAddress: " in out
    assert "2 stack(s): 0 error(s), 6 warning(s)" in out


@pytest.mark.parametrize(("name", "code", "fix"), [
    ("v100-bf16", "dtype-bf16-unsupported", "set engine.dtype: half"),
    ("v100-fp8-kv", "fp8-kv-cache-unsupported", "remove engine.kvCacheDtype"),
    ("tp3", "tp-kv-heads-indivisible", "set engine.tensorParallelSize to one of 1, 2, 4, 8"),
    ("weights-dont-fit", "weights-exceed-budget", "raise engine.tensorParallelSize"),
])
def test_invalid_stacks_fail_with_the_fix(name: str, code: str, fix: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "check", "--config-file", str(INVALID / f"{name}.yaml")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"== {name} =="
    error = next(line for line in lines if line.startswith("ERROR"))
    assert error.startswith(f"ERROR {code} vllm-serving:") and f" - {fix}" in error


def test_named_stack_and_path_argument(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--project-dir", str(project), "check", "v100", str(INVALID / "tp3.yaml")]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "== v100 ==" in out and "== tp3 ==" in out and "== a100 ==" not in out


def test_json_output(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(project), "check", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [entry["stack"] for entry in data] == ["a100", "v100"]
    finding = data[1]["findings"][0]
    assert set(finding) == {"code", "severity", "key", "message", "fix"}
    assert finding["severity"] == "warning"


def test_config_errors_are_findings_of_the_stack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "Pulumi.broken.yaml"
    bad.write_text("config:\n  vllm-serving:hardware:\n    gpu: V99\n    count: 1\n")
    good = tmp_path / "Pulumi.v100.yaml"
    shutil.copy(stack_file("v100"), good)
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)  # v100 takes its image from the project defaults
    assert main(["--project-dir", str(tmp_path), "check", "--json"]) == 1
    data = {entry["stack"]: entry["findings"] for entry in json.loads(capsys.readouterr().out)}
    assert {f["code"] for f in data["broken"]} == {"config-missing"}
    assert all(f["severity"] == "warning" for f in data["v100"])


def test_unknown_gpu_and_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (stack_file("v100")).read_text().replace("gpu: V100-32GB", "gpu: V100-32G")
    (tmp_path / "Pulumi.typo.yaml").write_text(text)
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    assert main(["--project-dir", str(tmp_path), "check", "typo", "absent"]) == 2  # one cannot be read
    out = capsys.readouterr().out
    assert "ERROR gpu-unknown vllm-serving:hardware.gpu: 'V100-32G' is not in the GPU catalog" in out
    assert "ERROR stack-file" in out and "no such stack file" in out


def test_no_stacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(tmp_path), "check"]) == 2
    assert "no Pulumi.<stack>.yaml" in capsys.readouterr().err


def test_console_entry_point(project: Path) -> None:
    """The `vllm-stack` console script (pyproject's [project.scripts]) runs `check`."""
    script = Path(sys.executable).with_name("vllm-stack")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "vllm_serving.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([*command, "--project-dir", str(project),
                           "check", "--config-file", str(INVALID / "v100-bf16.yaml")],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "ERROR dtype-bf16-unsupported" in done.stdout and "Traceback" not in done.stderr


def test_a_stack_without_findings_says_ok(capsys: pytest.CaptureFixture[str]) -> None:
    # the shipped local stack (CPU image, loopback, no secrets) raises nothing
    assert main(["--project-dir", str(PROJECT_DIR), "check", "local"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "== local ==", "ok: no findings", "1 stack(s): 0 error(s), 0 warning(s)"]


def test_a_file_given_by_path_gets_the_projects_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # as `pulumi preview --config-file PATH` run in the project: the image comes from Pulumi.yaml's default
    doc = yaml.safe_load(stack_file("a100").read_text(encoding="utf-8"))
    del doc["config"]["vllm-serving:image"]
    path = tmp_path / "Pulumi.elsewhere.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert main(["--project-dir", str(PROJECT_DIR), "check", "--config-file", str(path), "--json"]) == 0
    [result] = json.loads(capsys.readouterr().out)
    assert "config-missing" not in {f["code"] for f in result["findings"]}
