"""`vllm-stack capacity`: catalog model or config.json, JSON keys, the worked example, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.paths import ROOT
from vllm_serving.cli import main

QWEN3_4B = ROOT / "tests" / "fixtures" / "hf" / "qwen3-4b.config.json"
KEYS = {"weights_gib_per_gpu", "kv_bytes_per_token_per_gpu", "available_kv_gib", "kv_cache_tokens",
        "max_concurrency"}


def _json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["capacity", *args, "--json"]) == 0
    data: dict[str, object] = json.loads(capsys.readouterr().out)
    return data


@pytest.mark.parametrize(("kv", "logged"), [("auto", 83_488), ("fp8", 166_992)])
def test_worked_example_from_config_json(kv: str, logged: int, capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(["--model-config", str(QWEN3_4B), "--gpu", "L4", "--tp", "1",
                  "--available-kv-gib", "11.47", "--kv-cache-dtype", kv], capsys)
    assert KEYS <= set(data) and list(data)[:5] == sorted(KEYS, key=list(data).index)
    tokens = data["kv_cache_tokens"]
    assert isinstance(tokens, int) and abs(tokens - logged) / logged < 0.01
    assert data["available_kv_gib"] == 11.47


def test_catalog_model_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["capacity", "--model", "Qwen3.6-27B-FP8", "--gpu", "A100-80GB", "--gpus", "4", "--tp", "4",
            "--kv-cache-dtype", "fp8", "--gpu-memory-utilization", "0.95", "--max-model-len", "262144",
            "--vllm-version", "v0.19.1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("weights_gib_per_gpu")
    assert "max_concurrency" in out and "fits_one_request" in out


def test_weights_do_not_fit_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capacity", "--model", "Qwen3.5-27B", "--gpu", "V100-32GB", "--tp", "1"]) == 1
    assert "the weights do not fit" in capsys.readouterr().out


@pytest.mark.parametrize(("args", "message"), [
    (["--model", "Qwen3.5-72B", "--gpu", "A100-80GB", "--tp", "4"], "unknown model 'Qwen3.5-72B'; did you mean"),
    (["--model", "Qwen3.5-27B", "--gpu", "v100", "--tp", "8"], "did you mean V100-16GB, V100-32GB?"),
    (["--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--tp", "8", "--gpus", "4"], "needs 8 GPUs"),
    (["--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--tp", "4", "--vllm-version", "main"], "not a version"),
])
def test_bad_input_exits_1(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capacity", *args]) == 1
    assert message in capsys.readouterr().err


def test_bad_config_json_is_a_finding_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "qwen3"}')
    assert main(["capacity", "--model-config", str(path), "--gpu", "L4", "--tp", "1"]) == 1
    assert capsys.readouterr().err.startswith("ERROR model-config-invalid")
