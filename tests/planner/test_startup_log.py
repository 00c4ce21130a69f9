"""`calibrate` reads a vision-language start's encoder line as the corpus states it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.planner.test_available_memory_corpus import load_cases
from vllm_serving.planner.startup_log import parse_startup_log


@pytest.mark.parametrize("case", load_cases(), ids=lambda case: case["id"])
def test_the_encoder_line_gives_the_logged_dummy_batch(case: dict[str, Any]) -> None:
    """Every corpus log that prints "Encoder cache will be initialized with a budget of N tokens,
    and profiled with K <modality> items" (v1/worker/gpu_model_runner.py profile_run) parses to
    the budget, count and modality the case records; a text model's log to none."""
    found = parse_startup_log(case["log_lines"])
    logged = case["logged"]
    assert (found.encoder_budget, found.encoder_items, found.encoder_modality) == (
        logged.get("encoder_budget"), logged.get("encoder_items"), logged.get("encoder_modality"))


def test_only_the_first_encoder_line_counts() -> None:
    """Every TP worker prints the line: the first one read is kept."""
    line = ("(Worker_TP{rank} pid=1) INFO [gpu_model_runner.py:5753] Encoder cache will be initialized with a budget "
            "of {budget} tokens, and profiled with {items} video items of the maximum feature size.")
    found = parse_startup_log("\n".join([line.format(rank=0, budget=153600, items=1),
                                         line.format(rank=1, budget=16384, items=2)]))
    assert (found.encoder_budget, found.encoder_items, found.encoder_modality) == (153_600, 1, "video")


TP2_LOG = """\
INFO 12-03 10:00:00 [api_server.py:1351] vLLM API server version 0.19.1
INFO 12-03 10:00:01 [utils.py:253] non-default args: {'model': 'Qwen/Qwen3-32B', 'enforce_eager': True}
INFO 12-03 10:00:02 [core.py:93] Initializing a V1 LLM engine (v0.19.1) with config: max_num_batched_tokens=8192, \
enforce_eager=True
(Worker_TP0 pid=11) INFO 12-03 10:00:05 [gpu_worker.py:240] Free memory on device (78.53/79.11 GiB) on startup.
(Worker_TP0 pid=11) INFO 12-03 10:00:06 [gpu_model_runner.py:4010] Using V2 Model Runner
(Worker_TP0 pid=11) INFO 12-03 10:01:10 [gpu_model_runner.py:4100] Model loading took 30.52 GiB and 60.1 seconds
(Worker_TP1 pid=12) INFO 12-03 10:01:10 [gpu_model_runner.py:4100] Model loading took 30.61 GiB and 60.3 seconds
(Worker_TP0 pid=11) INFO 12-03 10:01:20 [backends.py:210] Directly load the compiled graph(s) from the cache, took 4.1 s
(Worker_TP0 pid=11) WARNING 12-03 10:01:30 [topk_topp_sampler.py:70] FlashInfer is not available. Falling back to \
the PyTorch-native implementation of top-p & top-k sampling.
(Worker_TP0 pid=11) INFO 12-03 10:01:40 [gpu_worker.py:300] Memory profiling: 4.30 GiB for peak activation, 0.21 GiB \
for non-torch memory
(Worker_TP1 pid=12) INFO 12-03 10:01:40 [gpu_worker.py:300] Memory profiling: 4.35 GiB for peak activation, 0.19 GiB \
for non-torch memory
(Worker_TP0 pid=11) INFO 12-03 10:01:41 [gpu_worker.py:310] Estimated CUDA graph memory: 0.85 GiB total
(Worker_TP0 pid=11) INFO 12-03 10:01:42 [gpu_worker.py:320] Available KV cache memory: 36.20 GiB
(Worker_TP1 pid=12) INFO 12-03 10:01:42 [gpu_worker.py:320] Available KV cache memory: 36.12 GiB
INFO 12-03 10:01:43 [kv_cache_utils.py:1300] GPU KV cache size: 592,384 tokens
INFO 12-03 10:01:43 [kv_cache_utils.py:1300] GPU KV cache size: 591,104 tokens
INFO 12-03 10:01:43 [kv_cache_utils.py:1304] Maximum concurrency for 40,960 tokens per request: 14.46x
INFO 12-03 10:01:43 [kv_cache_utils.py:1304] Maximum concurrency for 40,960 tokens per request: 14.43x
INFO 12-03 10:01:43 [kv_cache_utils.py:1304] Maximum concurrency for 40,960 tokens per request: 14.43x
(Worker_TP0 pid=11) INFO 12-03 10:02:00 [gpu_model_runner.py:4500] Graph capturing finished in 15 secs, took 0.91 GiB
"""


def test_a_tensor_parallel_log_gives_each_figure_at_its_worst_rank() -> None:
    """Every TP worker prints its own figures: the planner is judged against the busiest rank (the
    most weights, activation and graphs; the least KV memory, tokens and concurrency)."""
    found = parse_startup_log(TP2_LOG)
    assert found.version == "0.19.1"
    assert (found.weights_gib, found.activation_gib, found.non_torch_gib) == (30.61, 4.35, 0.21)
    assert (found.cudagraph_estimate_gib, found.cudagraph_gib) == (0.85, 0.91)
    assert (found.available_kv_gib, found.kv_tokens) == (36.12, 591_104)
    assert (found.max_concurrency, found.concurrency_tokens) == (14.43, 40_960)
    assert found.gpu_total_gib == 79.11 and found.max_num_batched_tokens == 8192
    assert (found.sampler, found.flashinfer_installed, found.model_runner) == (None, False, "v2")
    assert found.enforce_eager and found.compile_cache_warm
    assert found.encoder_budget is None
    # each of the 20 lines gave a figure; the repeated concurrency line is kept once
    assert len(found.lines) == len(set(found.lines)) == 19


def test_a_log_without_the_figures_says_none() -> None:
    found = parse_startup_log("INFO [api_server.py:1] Starting vLLM API server 0 on http://0.0.0.0:8000\n")
    assert found.version is None and found.weights_gib is None and found.kv_tokens is None and found.lines == []
    assert found.flashinfer_installed and not found.enforce_eager and found.model_runner is None


def test_the_first_total_and_token_budget_stand() -> None:
    """The device total from the start-up line, else from the memory snapshot; the first batch
    budget echoed (later lines repeat the config)."""
    found = parse_startup_log(
        "Free memory on device (70.00/79.11 GiB) on startup\n"
        "init memory snapshot: torch_peak=0B, free_memory=70.0GiB, total_memory=80.0GiB\n"
        "config: max_num_batched_tokens=2048\nconfig: max_num_batched_tokens=4096\n"
        "Using FlashInfer for top-p & top-k sampling.\n"
        "torch peak memory increase: 5.5GiB\nnon-torch forward increase memory: 0.4GiB\n")
    assert (found.gpu_total_gib, found.max_num_batched_tokens, found.sampler) == (79.11, 2048, "flashinfer")
    assert (found.activation_gib, found.non_torch_gib) == (5.5, 0.4)
    assert parse_startup_log("init memory snapshot: total_memory=39.5 GiB\n").gpu_total_gib == 39.5
