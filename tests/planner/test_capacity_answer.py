"""`vllm-stack capacity`: the answer first, the terms with their sources, the rules `check`
applies, `--for-context`, and the same figures as `plan` for the same inputs."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.cli import main
from vllm_serving.stack_files.loader import load_settings, read_stack_file

V100 = ["--model", "Qwen3.5-27B", "--gpu", "V100-32GB", "--tp", "8", "--max-model-len", "8192", "--dtype", "half"]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["--project-dir", str(PROJECT_DIR), "capacity", *args])
    return code, capsys.readouterr().out


def _json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out = _run([*args, "--json"], capsys)
    data: dict[str, Any] = json.loads(out)
    data["exit"] = code
    return data


def _flags_of(stack: str) -> list[str]:
    """`capacity` flags carrying the same inputs as the stack file."""
    settings = load_settings(read_stack_file(stack_file(stack)))
    engine, spec_cfg = settings.engine, settings.engine.speculative_config
    args = ["--model", str(settings.model.name), "--gpu", settings.hardware.gpu,
            "--gpus", str(settings.hardware.count), "--tp", str(engine.tensor_parallel_size),
            "--max-model-len", str(engine.max_model_len),
            "--gpu-memory-utilization", str(engine.gpu_memory_utilization)]
    args += ["--dtype", engine.dtype] if engine.dtype else []
    args += ["--kv-cache-dtype", engine.kv_cache_dtype] if engine.kv_cache_dtype else []
    args += ["--max-num-seqs", str(engine.max_num_seqs)] if engine.max_num_seqs else []
    args += ["--enable-prefix-caching" if engine.enable_prefix_caching else "--no-enable-prefix-caching"]
    if spec_cfg is not None:
        args += ["--num-speculative-tokens", str(spec_cfg.num_speculative_tokens),
                 "--speculative-method", spec_cfg.method]
    return args


@pytest.mark.parametrize("stack", ["v100", "a100"])
def test_capacity_and_plan_agree_for_the_same_inputs(stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", stack, "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    by_stack = _json([stack], capsys)
    by_flags = _json(_flags_of(stack), capsys)
    for answer in (by_stack, by_flags):
        assert {k: v for k, v in answer.items() if k in planned["capacity"]} == planned["capacity"]
        assert answer["memory_terms"] == planned["memoryBreakdown"]
    assert by_stack["findings"] == planned["findings"]


def test_the_summary_comes_first_and_names_what_limits_the_context(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(V100, capsys)
    lines = out.splitlines()
    assert code == 0
    assert lines[0].startswith("Qwen3.5-27B on 8 x V100-32GB (TP 8), vLLM v0.19.1")
    assert lines[1].split(":", 1) == ["  Answer", lines[1].split(":", 1)[1]] and "fits" in lines[1]
    assert "limited by the model's max_position_embeddings" in lines[2]
    assert "requests of 8,192 tokens" in lines[3]
    assert "weights 6.54 GiB" in lines[4] and "KV cache" in lines[4]


def test_memory_limits_the_context_when_the_cache_is_smaller(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(["--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--tp", "4", "--available-kv-gib", "2"], capsys)
    assert data["context_limited_by"] == "memory" and data["exit"] == 1
    assert data["max_model_len_that_fits"] == data["longest_context_by_memory"] < 262144
    code, out = _run(["--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--tp", "4", "--available-kv-gib", "2"], capsys)
    assert code == 1 and "does not fit" in out and "limited by the KV cache memory" in out


def test_every_detail_line_has_a_label_and_a_unit(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = _run(V100, capsys)
    memory = out.split("\n\n")[1].splitlines()
    assert memory[0].startswith("Memory per GPU, GiB")
    for line in memory[1:]:  # label, GiB figure, [vllm/file function]
        assert re.fullmatch(r"  [a-z=-].*\S +\d+\.\d\d  \[vllm/\S+( \S+)?\]", line), line
    kv = out.split("\n\n")[2]
    assert "tokens the KV cache holds:" in kv and 'vLLM will log "GPU KV cache size"' in kv
    assert "Three token figures, one pool" in kv  # the hybrid's token totals explained


def test_each_subtracted_term_prints_its_vllm_source(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(V100, capsys)
    names = [row["name"] for row in data["memory_terms"]]
    assert names[0] == "requested" and names[-1] == "available_kv_cache"
    assert {"weights", "activation_peak", "non_torch", "cuda_graphs"} <= set(names)
    assert all("v1/" in row["source"] or "model_executor/" in row["source"] for row in data["memory_terms"])
    assert sum(float(row["gib"]) for row in data["memory_terms"][:-1]) == pytest.approx(
        data["available_kv_gib"], abs=0.05)


def test_for_context_answers_concurrency_at_that_length(capsys: pytest.CaptureFixture[str]) -> None:
    full = _json(V100, capsys)
    short = _json([*V100, "--for-context", "2048"], capsys)
    assert short["for_context"]["tokens"] == 2048 and short["for_context"]["within_max_model_len"]
    as_max_len = _json([*V100[:-4], "--max-model-len", "2048", *V100[-2:]], capsys)
    assert short["for_context"]["max_concurrency"] == as_max_len["max_concurrency"] > full["max_concurrency"]
    _, out = _run([*V100, "--for-context", "16384"], capsys)
    assert "the server refuses requests over max-model-len 8,192; raise it to 16384" in out


def test_ad_hoc_flags_run_the_rules_check_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """TP 3 cannot split 4 KV heads: `check` refuses it, so capacity prints it and exits 1,
    naming the flag beside the key."""
    args = ["--model", "Qwen3.5-27B", "--gpu", "A100-80GB", "--tp", "3"]
    data = _json(args, capsys)
    finding = next(f for f in data["findings"] if f["code"] == "tp-kv-heads-indivisible")
    assert finding["key"] == "vllm-serving:engine.tensorParallelSize (--tp)" and data["exit"] == 1
    code, out = _run(args, capsys)
    assert code == 1 and "Rules (as vllm-stack check, ad-hoc flags" in out
    assert "ERROR tp-kv-heads-indivisible" in out


def test_a_stack_brings_its_own_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--project-dir", str(PROJECT_DIR), "capacity", "v100", "--tp", "4"])
    assert code == 2 and "drop --tp" in capsys.readouterr().err
    code, out = _run(["v100"], capsys)
    assert code == 0 and out.startswith("stack v100: Qwen3.5-27B on 8 x V100-32GB")


def test_new_flags_reach_the_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--model", "Qwen3.5-27B", "--gpu", "H100-80GB", "--tp", "2", "--vllm-version", "v0.20.2"]
    default = _json(base, capsys)
    eager = _json([*base, "--enforce-eager"], capsys)
    piecewise = _json([*base, "--optimization-level", "1"], capsys)
    few_seqs = _json([*base, "--max-num-seqs", "64"], capsys)
    batched = _json([*base, "--max-num-batched-tokens", "32768", "--max-num-seqs", "64"], capsys)
    assert default["cuda_graph_gib"] > 0 and eager["cuda_graph_gib"] == 0
    assert eager["available_kv_gib"] > piecewise["available_kv_gib"] > default["available_kv_gib"]
    assert (batched["max_num_batched_tokens"], batched["max_num_seqs"]) == (32768, 64)
    assert batched["activation_gib"] > few_seqs["activation_gib"]
    assert few_seqs["activation_gib"] < default["activation_gib"]  # 64 sampler rows, not H100's 1024
