"""The capacity answer in words: the limit that binds, named truly, with the fix that helps;
the error band it is judged by; `plan` leading with the same answer."""

from __future__ import annotations

import json

import pytest

from tests.paths import PROJECT_DIR
from vllm_serving.cli import main


def _capacity(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["--project-dir", str(PROJECT_DIR), "capacity", *args])
    return code, capsys.readouterr().out


def test_a_request_past_the_models_positions_names_the_model_not_memory(capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen3-8B's config allows 40,960 positions; one A100-80GB holds far more than 200,000
    tokens of its KV cache: the model is the limit, and more GPUs cannot help."""
    code, out = _capacity(["--model", "Qwen3-8B", "--gpu", "A100-80GB", "--tp", "1", "--max-model-len", "200000"],
                          capsys)
    answer = out.splitlines()[1]
    assert code == 1
    assert "the model handles at most 40,960 tokens" in answer and "lower max-model-len to 40,960" in answer
    assert "more GPUs or memory cannot raise" in answer
    assert "needs more KV cache" not in answer
    held = int(answer.split("memory alone would hold ")[1].split(")")[0].replace(",", ""))
    assert held > 200_000


def test_a_request_past_the_memory_names_memory_and_more_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _capacity(["--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--tp", "4", "--available-kv-gib", "2"],
                          capsys)
    answer = out.splitlines()[1]
    assert code == 1
    assert "needs more KV cache than the GPUs have" in answer and "add GPUs" in answer
    assert "model handles at most" not in answer


def test_without_tp_the_smallest_that_fits_is_chosen_and_said(capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen3.5-27B in float16 on V100-32GBs with 64k tokens: 51 GiB of weights need TP 4 (TP 2
    leaves each GPU 25.5 GiB of weights in a 28.6 GiB budget, not enough for a 64k request)."""
    base = ["--model", "Qwen3.5-27B", "--gpu", "V100-32GB", "--dtype", "half", "--max-model-len", "65536"]
    code, out = _capacity(base, capsys)
    assert code == 0
    assert "on 4 x V100-32GB (TP 4)" in out.splitlines()[0] and "the smallest of [1, 2, 4, 8] that fits" in out
    code, out = _capacity([*base, "--tp", "2"], capsys)
    assert code == 1 and "does not fit" in out.splitlines()[1]


def test_the_answer_shows_the_error_band_and_the_pessimistic_figures(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _capacity(["v100"], capsys)
    lines = out.splitlines()
    assert code == 0
    assert "at least" in lines[3] and "at worst" in lines[4]
    assert lines[5].startswith("  Error band:") and " over " in lines[5] and " logs" in lines[5]


def test_plan_leads_with_the_capacity_answer_and_keeps_raw_fields_for_json(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "a100"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("Qwen3.6-27B-FP8 on 4 x A100-80GB (TP 4), vLLM v0.19.1")
    assert out.splitlines()[1].startswith("  Answer:")
    assert "linear_state_bytes_per_seq_per_gpu" not in out and "vllm_logged_kv_tokens" not in out
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "a100", "--json"]) == 0
    capacity = json.loads(capsys.readouterr().out)["capacity"]
    assert {"linear_state_bytes_per_seq_per_gpu", "pessimistic_max_concurrency"} <= set(capacity)
