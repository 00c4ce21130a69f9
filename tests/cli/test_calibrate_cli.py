"""`vllm-stack calibrate STACK LOG`: the plan beside a real start-up log, term by term, and the
log written as a corpus case the corpus test accepts."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.paths import FIXTURES, PROJECT_DIR, stack_file
from tests.planner import test_available_memory_corpus as corpus
from vllm_serving.cli import main
from vllm_serving.planner.available_memory import estimate_available_memory
from vllm_serving.planner.startup_case import case_inputs

LOGS = FIXTURES / "startup_logs"
LOG = LOGS / "llmd-qwen3-8b-h100.yaml"
LLMD_QWEN3_8B = {"gpuMemoryUtilization": 0.95, "maxModelLen": 8192, "maxNumSeqs": 1024, "maxNumBatchedTokens": 8192}


def _project(tmp_path: Path, *, model: str = "Qwen3-8B", gpus: int = 1, engine: dict[str, Any] | None = None,
             log: Path = LOG) -> Path:
    """A stack as a corpus start ran on H100s with v0.19.0; by default the llm-d campaign's
    Qwen3-8B start: one H100, util 0.95, 8,192 tokens, 1,024 sequences (its log prints vLLM's
    DEBUG breakdown)."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    doc: dict[str, Any] = yaml.safe_load(stack_file("v100").read_text())
    config = doc["config"]
    config["vllm-serving:hardware"] = {"gpu": "H100-80GB", "count": gpus}
    config["vllm-serving:image"]["tag"] = "v0.19.0"
    config["vllm-serving:model"]["name"] = model
    config["vllm-serving:engine"] = engine or LLMD_QWEN3_8B
    (tmp_path / "Pulumi.h100.yaml").write_text(yaml.safe_dump(doc))
    (tmp_path / "vllm.log").write_text(yaml.safe_load(log.read_text())["log_lines"])
    return tmp_path


def _run(project: Path, *args: str) -> int:
    return main(["--project-dir", str(project), "calibrate", "h100", *args])


def test_each_term_is_set_beside_the_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    assert _run(project, str(project / "vllm.log"), "--json") == 0  # within the judged band
    out = capsys.readouterr().out
    assert out == json.dumps(json.loads(out), indent=2) + "\n"  # laid out as every verb's --json
    rows = {row["term"]: row for row in json.loads(out)["rows"]}
    assert rows["weights"]["logged"] == 15.27 and rows["weights"]["plan"] == pytest.approx(15.27, rel=0.01)
    assert rows["available KV"]["logged"] == 57.5 and abs(rows["available KV"]["error"]) < 0.01
    assert rows["activation peak"]["logged"] == 2.21 and rows["non-torch"]["logged"] == 0.25  # the DEBUG lines
    assert rows["CUDA graphs (estimate)"]["logged"] == 0.84 and rows["CUDA graphs (captured)"]["logged"] == 0.96
    assert rows["KV tokens"]["logged"] == 418_688 and rows["concurrency"]["logged"] == 51.11
    assert "encoder budget" not in rows  # a text model: no encoder pass, none logged


def test_a_vision_language_start_shows_the_encoders_dummy_batch(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """ramrow's Qwen3.5-27B start on four H100s (v0.19.0, 8,192 batched tokens, 262,144 context)
    logs one 16,384-token image profiled: the plan's encoder pass is set beside that line, and
    its memory (inside the activation peak, no log line of its own) is shown."""
    engine = {"tensorParallelSize": 4, "maxModelLen": 262144, "maxNumBatchedTokens": 8192}
    project = _project(tmp_path, model="Qwen3.5-27B", gpus=4, engine=engine,
                       log=LOGS / "ramrow-qwen35-27b-h100-tp4.yaml")
    _run(project, str(project / "vllm.log"), "--json")
    rows = {row["term"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["encoder budget"]["logged"] == 16_384 and rows["encoder budget"]["plan"] == 16_384
    assert rows["encoder items"]["logged"] == 1 and rows["encoder items"]["plan"] == 1
    assert "1 image of 16,384 tokens (the log: 1 image)" in rows["encoder items"]["note"]
    forward, kept = rows["encoder forward peak"]["plan"], rows["encoder kept"]["plan"]
    assert 0 < kept < forward and rows["encoder forward peak"]["logged"] is None
    assert forward <= rows["activation peak"]["plan"]
    case_file = tmp_path / "mine.yaml"
    _run(project, str(project / "vllm.log"), "--write-case", str(case_file), "--source-url", "https://example.org/l")
    table = capsys.readouterr().out
    # counts read as counts: tokens and items whole, with thousands separated
    (budget,) = [line.split() for line in table.splitlines() if line.strip().startswith("encoder budget")]
    (items,) = [line.split() for line in table.splitlines() if line.strip().startswith("encoder items")]
    assert budget[2:4] == ["16,384", "16,384"] and items[2:4] == ["1", "1"]
    case = yaml.safe_load(case_file.read_text()) | {"file": case_file.name}
    corpus.test_case_states_its_source_and_the_lines_used(case)
    assert case["logged"]["encoder_budget"] == 16_384 and case["logged"]["encoder_modality"] == "image"
    encoder = estimate_available_memory(case_inputs(case)).encoder  # the written case profiles the encoder too
    assert encoder is not None and encoder.batch.encoder_budget == 16_384


def test_the_log_may_come_from_standard_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO((project / "vllm.log").read_text()))
    assert _run(project, "-") == 0
    out = capsys.readouterr().out
    assert out.startswith("calibrate h100 against -: vLLM v0.19.0 (the log's v0.19.0)")
    assert "available KV is within the band" in out


def test_the_written_case_is_a_corpus_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    case_file = tmp_path / "mine.yaml"
    assert _run(project, str(project / "vllm.log"), "--write-case", str(case_file),
                "--source-url", "https://example.org/vllm.log") == 0
    case = yaml.safe_load(case_file.read_text()) | {"file": case_file.name}
    corpus.test_case_states_its_source_and_the_lines_used(case)  # what every corpus case must state
    assert case["vllm_version"] == "0.19.0" and case["engine"]["max_num_seqs"] == 1024
    assert (case["id"], case["source_url"]) == ("mine", "https://example.org/vllm.log")  # named for its file
    logged = case["logged"]["available_kv_gib"]
    assert estimate_available_memory(case_inputs(case)).available_kv_gib == pytest.approx(logged, rel=0.03)


def test_a_file_without_start_up_lines_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    (project / "other.log").write_text("INFO nothing about memory here\n")
    assert _run(project, str(project / "other.log")) == 2
    assert "has no 'Model loading took'" in capsys.readouterr().err
    assert _run(project, str(project / "missing.log")) == 2
    assert "vllm-stack calibrate: cannot read " in capsys.readouterr().err


def test_a_missing_log_under_json_is_a_json_error_naming_the_verb(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # a script reads stdout as JSON whatever happened (docs/cli.md "Exit codes and errors")
    project = _project(tmp_path)
    missing = project / "missing.log"
    assert _run(project, str(missing), "--json") == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"verb": "calibrate",
                                        "error": f"cannot read {missing}: No such file or directory",
                                        "findings": []}
    assert captured.err == f"vllm-stack calibrate: cannot read {missing}: No such file or directory\n"


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "directory"])
def test_a_log_that_is_not_a_regular_file_is_refused_without_blocking(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], special: str) -> None:
    """A FIFO with no writer (a blocking open waits for ever), a device, a directory: exit 2 at once,
    with the way to pipe a log (run in a thread, so a hang fails the test instead of stalling it)."""
    project = _project(tmp_path)
    log = project / "given.log"
    if special == "fifo":
        os.mkfifo(log)
    elif special == "directory":
        log.mkdir()
    else:
        log.symlink_to(special)
    codes: list[int] = []
    worker = threading.Thread(target=lambda: codes.append(_run(project, str(log))), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert codes == [2], "calibrate did not end"
    err = capsys.readouterr().err
    assert "not a regular file" in err
    assert "calibrate STACK -" in err
    assert err.startswith(f"vllm-stack calibrate: {log} ")


def test_a_directory_given_as_the_log_under_json_is_a_json_error_naming_the_verb(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path)
    (project / "logs").mkdir()
    assert _run(project, str(project / "logs"), "--json") == 2
    said = json.loads(capsys.readouterr().out)
    assert said["verb"] == "calibrate" and said["error"].startswith(f"{project / 'logs'} ")


def test_the_band_takes_an_optimistic_plan_up_to_the_judged_error_and_a_pessimistic_one_3_points_more(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """error = (plan - logged) / logged: within when -(judged + 0.03) <= error <= judged (a plan
    that promises more KV than vLLM finds fails a start; one that promises less only wastes some).
    The log's 'Available KV cache memory' line is rewritten to put the error where each case needs."""
    project = _project(tmp_path)
    assert _run(project, str(project / "vllm.log"), "--json") == 0
    said = json.loads(capsys.readouterr().out)
    plan = next(row["plan"] for row in said["rows"] if row["term"] == "available KV")
    judged = said["judged_error"]
    text = (project / "vllm.log").read_text()

    def verdict(error: float) -> tuple[int, bool]:
        logged = plan / (1 + error)
        (project / "shifted.log").write_text(re.sub(r"Available KV cache memory: [0-9.]+ GiB",
                                                    f"Available KV cache memory: {logged:.4f} GiB", text))
        code = _run(project, str(project / "shifted.log"), "--json")
        return code, json.loads(capsys.readouterr().out)["outside_band"]

    assert verdict(judged - 0.005) == (0, False)  # optimistic, within the judged error
    assert verdict(judged + 0.01) == (1, True)  # optimistic past it: a start could fail
    assert verdict(-(judged + 0.02)) == (0, False)  # pessimistic, within the 3 points more
    assert verdict(-(judged + 0.04)) == (1, True)
