"""A stack's errors come in one run: config errors together with catalog and rule errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_serving.cli import main

STACK = """config:
  vllm-serving:hardware:
    gpu: {gpu}
    count: 8
  vllm-serving:model:
    name: Qwen3.5-27B
    hostPath: /models/Qwen3.5-27B
  vllm-serving:engine:
    tensorParallelSize: {tp}
    dtype: half
    maxModelLen: {max_len}
  vllm-serving:container:
    ipcMode: {ipc}
"""


def write(project: Path, gpu: str = "V100-32GB", tp: str = "8", max_len: str = "8192", ipc: str = "host") -> None:
    (project / "Pulumi.bad.yaml").write_text(STACK.format(gpu=gpu, tp=tp, max_len=max_len, ipc=ipc))


def codes(text: str) -> list[tuple[str, str]]:
    """(code, key) of each ERROR line."""
    return [(line.split()[1], line.split()[2].rstrip(":")) for line in text.splitlines() if line.startswith("ERROR")]


def test_type_error_and_unknown_gpu_together(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, gpu="V100-32G", max_len="8k")
    assert main(["--project-dir", str(project), "check", "bad"]) == 1
    assert codes(capsys.readouterr().out) == [
        ("config-type", "vllm-serving:engine.maxModelLen"), ("gpu-unknown", "vllm-serving:hardware.gpu")]


def test_type_error_and_rule_error_together(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 8 GPUs with a private IPC namespace and Docker's 64 MiB /dev/shm: a rule error elsewhere
    write(project, max_len="8k", ipc="private")
    assert main(["--project-dir", str(project), "check", "bad"]) == 1
    found = codes(capsys.readouterr().out)
    assert ("config-type", "vllm-serving:engine.maxModelLen") in found
    assert ("shm-too-small", "vllm-serving:container.shmSize") in found


def test_plan_reports_them_all_too(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(project, gpu="V100-32G", max_len="8k")
    assert main(["--project-dir", str(project), "plan", "bad"]) == 1
    assert [line.split()[1] for line in capsys.readouterr().err.splitlines()] == ["config-type", "gpu-unknown"]


def test_no_finding_about_a_default_that_stands_in(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # TP "eight" does not parse; TP 1 stands in for the second look, and 27B of weights on one
    # V100 would not fit: that is not this stack's problem, so it is not reported
    write(project, tp="eight")
    assert main(["--project-dir", str(project), "check", "bad"]) == 1
    assert codes(capsys.readouterr().out) == [("config-type", "vllm-serving:engine.tensorParallelSize")]


def test_rule_errors_in_the_same_section_as_a_type_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # maxModelLen does not parse; bfloat16 on a V100 and TP 16 on 8 GPUs are errors in the same
    # engine section, about keys the stack did write: reported in the same run
    (project / "Pulumi.bad.yaml").write_text(
        STACK.format(gpu="V100-32GB", tp="16", max_len="32k", ipc="host").replace("dtype: half", "dtype: bfloat16"))
    assert main(["--project-dir", str(project), "check", "bad"]) == 1
    found = codes(capsys.readouterr().out)
    assert found[0] == ("config-type", "vllm-serving:engine.maxModelLen")
    assert ("dtype-bf16-unsupported", "vllm-serving:engine.dtype") in found
    assert ("parallel-exceeds-host", "vllm-serving:engine.tensorParallelSize") in found


def test_a_bad_weights_path_does_not_hide_the_rest(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the weights path is required: a neutral stand-in lets the rules look at everything else
    text = STACK.format(gpu="V100-32GB", tp="8", max_len="8192", ipc="host").replace(
        "/models/Qwen3.5-27B", "~/models/qwen") + "    runtime: nvidia\n  vllm-serving:image:\n    tag: latest\n"
    (project / "Pulumi.bad.yaml").write_text(text)
    assert main(["--project-dir", str(project), "check", "bad"]) == 1
    out = capsys.readouterr().out
    found = codes(out)
    assert ("config-invalid", "vllm-serving:model.hostPath") in found
    assert ("image-latest", "vllm-serving:image.tag") in found
    assert "stand-in" not in out
