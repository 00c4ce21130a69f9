"""The capacity answer line by line, from a plan written out by hand: which limit binds and the fix
that helps, the concurrency a reader can count on, each memory term's label, the KV cache rows.

The plan below is Qwen3-8B (config.json: 36 layers, 8 KV heads, head_dim 128,
max_position_embeddings 40,960) on one A100-80GB in bfloat16, its figures worked out by hand:
- KV bytes per token: 36 layers x 8 heads x 128 x 2 (K and V) x 2 B = 147,456 B;
- a 16-token block of one layer: 16 x 8 x 128 x 2 x 2 B = 65,536 B;
- 80.00 GiB x 0.90 = 72.00 GiB requested; minus weights 15.26, activation 2.50, non-torch 0.14
  leaves 54.10 GiB; 54.10 x 2^30 / (65,536 B x 36 layers) = 24,621 blocks = 393,936 tokens;
- a 32,768-token request holds 2,048 blocks, so 24,621 / 2,048 = 12.02 requests at once.
Every expected line is written out as the reader sees it; none is computed by the view.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from vllm_serving.findings import Finding, Severity
from vllm_serving.planner.capacity_plan import CapacityPlan, MemoryTerm
from vllm_serving.views.capacity_summary import (
    Question,
    capacity_text,
    finding_lines,
    kv_lines,
    memory_lines,
    summary_lines,
)

BASE: dict[str, Any] = {
    "model": "Qwen3-8B", "gpu": "A100-80GB", "tp": 1, "pp": 1, "dtype": "bfloat16", "kv_cache_dtype": "auto",
    "gpu_memory_utilization": 0.9, "max_model_len": 32768, "enable_prefix_caching": True,
    "mamba_cache_mode": "none", "num_speculative_tokens": 0, "block_size": 16, "vllm_version": "0.19.1",
    "vllm_version_source": "the image tag", "memory_accounting_release": "0.19.1", "gpu_total_gib": 80.0,
    "max_num_batched_tokens": 8192, "max_num_seqs": 256, "cudagraph_mode": "full_and_piecewise",
    "weights_gib_per_gpu": 15.26, "draft_weights_gib_per_gpu": 0.0, "budget_gib": 72.0, "activation_gib": 2.5,
    "non_torch_gib": 0.14, "cuda_graph_gib": 0.0, "cudagraph_estimate_gib": 0.0, "overhead_gib": 2.64,
    "available_kv_gib": 54.1, "available_kv_from_log": False, "kv_bytes_per_token_per_gpu": 147456,
    "linear_state_bytes_per_seq_per_gpu": 0, "page_size_bytes": 65536, "num_gpu_blocks": 24621,
    "blocks_per_request": 2048, "kv_cache_tokens": 393936, "vllm_logged_kv_tokens": 393936,
    "max_concurrency": 12.02, "max_model_len_that_fits": 40960, "longest_context_by_memory": 393936,
    "context_limited_by": "model", "weights_fit": True, "fits_one_request": True,
}


def plan(**changes: Any) -> CapacityPlan:
    return CapacityPlan(**{**BASE, **changes})


def question(**changes: Any) -> Question:
    asked: dict[str, Any] = {"label": "Qwen3-8B on 1 x A100-80GB (TP 1)", "asked_tokens": 32768,
                             "asked_concurrency": 12.02, "max_position_embeddings": 40960}
    return Question(**{**asked, **changes})


def error(code: str = "dtype-bf16-unsupported", waived: str | None = None) -> Finding:
    return Finding(code, Severity.ERROR, "vllm-serving:engine.dtype", "bfloat16 needs compute capability 8.0",
                   "set engine.dtype: half", waived)


def answer(p: CapacityPlan, q: Question | None = None, findings: list[Finding] | None = None) -> str:
    return summary_lines(p, q or question(), findings or [])[1]


# --- the answer: the limit that binds, and the fix that helps ------------------------------------

def test_weights_that_do_not_fit_ask_for_more_gpus_a_quantized_checkpoint_or_memory() -> None:
    assert answer(plan(weights_fit=False)) == (
        "  Answer:           does not fit - the weights do not fit each GPU's budget: more GPUs (TP), "
        "a quantized checkpoint or more memory")


def test_a_request_past_the_kv_memory_says_how_long_one_can_be_and_what_helps() -> None:
    p = plan(fits_one_request=False, max_model_len=40960, longest_context_by_memory=30000)
    assert answer(p) == (
        "  Answer:           does not fit: one 40,960-token request needs more KV cache than the GPUs have "
        "(memory holds at most 30,000 tokens): lower max-model-len to that, or add GPUs (TP) or memory "
        "(utilization)")


def test_a_request_past_the_models_positions_says_gpus_cannot_help() -> None:
    assert answer(plan(max_model_len=65536)) == (
        "  Answer:           does not fit: the model handles at most 40,960 tokens (its max_position_embeddings; "
        "memory alone would hold 393,936): lower max-model-len to 40,960 - more GPUs or memory cannot raise "
        "the model's limit")


def test_fitting_only_at_the_optimistic_estimate_names_the_error_and_the_length_that_holds() -> None:
    p = plan(judged_error=0.035, fits_pessimistic=False, pessimistic_max_model_len_that_fits=28672)
    assert answer(p) == (
        "  Answer:           fits only inside the estimate's error band: at the release's worst measured error "
        "(+3.5%) one request holds at most 28,672 tokens (capacity-tight below says what gives margin)")


def test_rule_errors_turn_a_fit_into_a_refusal_but_a_waived_one_does_not() -> None:
    assert answer(plan(), findings=[error(), error("other")]) == (
        "  Answer:           fits in memory, but 2 rule error(s) below stop the deployment")
    assert answer(plan(), findings=[error(waived="patched image")]) == (
        "  Answer:           fits: the weights and a full 32,768-token request fit")


def test_a_fit_says_whether_it_holds_at_the_worst_measured_error_too() -> None:
    assert answer(plan()) == "  Answer:           fits: the weights and a full 32,768-token request fit"
    assert answer(plan(judged_error=0.035, fits_pessimistic=True)) == (
        "  Answer:           fits: the weights and a full 32,768-token request fit, also at the release's "
        "worst measured error (+3.5%)")


# --- the other summary lines ---------------------------------------------------------------------

def test_concurrency_at_the_asked_length_and_at_the_worst_error() -> None:
    lines = summary_lines(plan(), question(), [])
    assert lines[3] == "  Concurrency:      12.0 requests of 32,768 tokens at once"
    worse = plan(judged_error=0.035, fits_pessimistic=True, pessimistic_max_concurrency=11.25)
    assert summary_lines(worse, question(), [])[3] == (
        "  Concurrency:      12.0 requests of 32,768 tokens at once (at least 11.2 at the worst measured error)")
    # --for-context asks about another length: its own worst case, not the plan's max-model-len one
    asked = question(asked_tokens=16384, asked_concurrency=24.04, asked_pessimistic_concurrency=22.5)
    assert summary_lines(worse, asked, [])[3] == (
        "  Concurrency:      24.0 requests of 16,384 tokens at once (at least 22.5 at the worst measured error)")


def test_concurrency_past_the_servers_or_the_models_limit_is_none() -> None:
    longer = question(asked_tokens=36000, asked_concurrency=10.94)
    assert summary_lines(plan(), longer, [])[3] == (
        "  Concurrency:      none: the server refuses requests over max-model-len 32,768; raise it to 36000 "
        "and the KV cache holds 10.9 of 36,000 tokens at once")
    too_long = question(asked_tokens=50000, asked_concurrency=7.9)
    assert summary_lines(plan(), too_long, [])[3] == (
        "  Concurrency:      none: the model cannot take a 50,000-token request")


def test_the_head_the_longest_context_and_the_per_gpu_figures() -> None:
    lines = summary_lines(plan(max_model_len_that_fits=40960), question(tp_choice="the smallest that fits"), [])
    assert lines[0] == "Qwen3-8B on 1 x A100-80GB (TP 1), vLLM v0.19.1; TP 1: the smallest that fits"
    assert lines[2] == (
        "  Longest context:  40,960 tokens, limited by the model's max_position_embeddings (memory alone holds "
        "393,936; the model allows 40,960); max-model-len 32,768 caps what the server accepts")
    assert lines[4] == "  Per GPU:          weights 15.26 GiB, KV cache 54.10 GiB; CUDA total 80.00 GiB"
    assert len(lines) == 5  # no error band without a judged error
    memory = plan(context_limited_by="memory", max_model_len=20000, max_model_len_that_fits=20000,
                  longest_context_by_memory=20000)
    assert summary_lines(memory, question(), [])[2] == (
        "  Longest context:  20,000 tokens, limited by the KV cache memory (memory alone holds 20,000; "
        "the model allows 40,960)")


def test_the_worst_case_kv_and_the_error_band_show_only_when_judged() -> None:
    p = plan(judged_error=0.035, fits_pessimistic=True, pessimistic_available_kv_gib=52.2,
             error_band="-3.5% .. +2.0% over 12 logs")
    lines = summary_lines(p, question(), [])
    assert lines[4] == ("  Per GPU:          weights 15.26 GiB, KV cache 54.10 GiB (at worst 52.20); "
                        "CUDA total 80.00 GiB")
    assert lines[5] == "  Error band:       -3.5% .. +2.0% over 12 logs"


def test_no_kv_cache_says_how_much_is_missing() -> None:
    p = plan(available_kv_gib=-1.5, fits_one_request=False)
    assert summary_lines(p, question(), [])[4] == (
        "  Per GPU:          weights 15.26 GiB, no KV cache (1.50 GiB short); CUDA total 80.00 GiB")


def test_the_cpu_backend_reads_per_cpu_without_cuda_memory() -> None:
    p = plan(gpu="CPU", gpu_total_gib=0.0, available_kv_gib=40.0)
    assert summary_lines(p, question(), [])[4] == "  Per CPU:          weights 15.26 GiB, KV cache 40.00 GiB"
    assert memory_lines(p) == [
        "Memory: the CPU backend's KV cache is VLLM_CPU_KVCACHE_SPACE, 40.00 GiB "
        "(v1/worker/cpu_worker.py CPUWorker.determine_available_memory); weights use host memory"]
    kv = kv_lines(p)
    assert kv[0] == "KV cache per CPU"
    assert kv[2] == "  CPUs:                                CPU x 1 (TP 1, PP 1)"
    assert kv[5] == "  KV bytes per token per CPU:          147,456 B (attention layers)"
    assert kv[7] == "  KV cache blocks per CPU:             24,621"


# --- the memory detail ---------------------------------------------------------------------------

TERMS = (
    MemoryTerm(name="weights", gib=15.26, source="v1/worker/gpu_model_runner.py GPUModelRunner.load_model"),
    MemoryTerm(name="activation_peak", gib=2.5, source="v1/worker/gpu_worker.py Worker.determine_available_memory: "
                                                       "the profiling run's torch peak"),
    MemoryTerm(name="non_torch", gib=0.14, source="v1/worker/gpu_worker.py, non-torch growth"),
    MemoryTerm(name="cuda_graphs", gib=0.0, source="v1/worker/gpu_model_runner.py capture_model"),
)


def memory_rows(p: CapacityPlan) -> list[list[str]]:
    """Each detail row as (label, GiB, [source]), its padding aside; the columns must line up."""
    rows = memory_lines(p)[1:]
    assert len({row.index("[") for row in rows}) == 1, rows
    return [re.split(r"\s{2,}", row.strip()) for row in rows]


def test_each_subtracted_term_is_labelled_with_its_cause_and_source() -> None:
    p = plan(memory_terms=TERMS, cudagraph_estimate_gib=0.48)
    assert memory_lines(p)[0] == (
        "Memory per GPU, GiB (vLLM v0.19.1's accounting, read from release 0.19.1; version from the image tag)")
    assert memory_rows(p) == [
        ["requested: CUDA total 80.00 GiB x utilization 0.90", "72.00",
         "[vllm/v1/worker/gpu_worker.py Worker.init_device]"],
        ["- weights", "15.26", "[vllm/v1/worker/gpu_model_runner.py GPUModelRunner.load_model]"],
        ["- activation peak of the profiling run (8,192 batched tokens, 256 seqs)", "2.50",
         "[vllm/v1/worker/gpu_worker.py Worker.determine_available_memory]"],
        ["- non-torch memory (CUDA context growth)", "0.14", "[vllm/v1/worker/gpu_worker.py]"],
        ["- CUDA graphs (vLLM estimates 0.48; captured outside the budget)", "0.00",
         "[vllm/v1/worker/gpu_model_runner.py capture_model]"],
        ["= available for the KV cache", "54.10", "[vllm/v1/worker/gpu_worker.py Worker.determine_available_memory]"],
    ]


def test_nccl_shows_only_across_gpus_and_the_graph_residue_only_past_the_base_terms() -> None:
    one = [t for t in TERMS if t.name == "non_torch"]
    label = "non-torch memory (CUDA context growth{})"
    assert label.format("") in memory_lines(plan(memory_terms=tuple(one)))[2]
    assert label.format(", NCCL") in memory_lines(plan(memory_terms=tuple(one), tp=2))[2]
    assert label.format(", NCCL") in memory_lines(plan(memory_terms=tuple(one), pp=2))[2]
    # 0.18 GiB is the base and NCCL terms; above it, graph profiling left memory behind
    assert label.format(", NCCL, what graph profiling leaves") in memory_lines(
        plan(memory_terms=tuple(one), tp=2, non_torch_gib=0.5))[2]
    assert label.format("") in memory_lines(plan(memory_terms=tuple(one), non_torch_gib=0.18))[2]
    # the planner's base and NCCL terms (planner/memory_accounting.json: 0.06 + 0.12 GiB); anything
    # past them is what graph profiling left
    assert label.format(", NCCL") in memory_lines(plan(memory_terms=tuple(one), tp=2, non_torch_gib=0.18))[2]
    assert label.format(", NCCL, what graph profiling leaves") in memory_lines(
        plan(memory_terms=tuple(one), tp=2, non_torch_gib=0.19))[2]


def test_a_speculative_draft_is_counted_beside_the_model_and_graphs_inside_the_budget_say_nothing_more() -> None:
    terms = (TERMS[0], TERMS[3])
    lines = memory_lines(plan(memory_terms=terms, draft_weights_gib_per_gpu=0.82, cuda_graph_gib=0.48,
                              cudagraph_estimate_gib=0.48))
    assert lines[2].startswith("  - weights (model 15.26 + speculative draft 0.82)  ")
    assert lines[3].startswith("  - CUDA graphs  ")


def test_a_logged_kv_memory_is_marked_as_logged() -> None:
    lines = memory_lines(plan(available_kv_from_log=True))
    assert lines[-1].startswith("  = available for the KV cache (as logged, --available-kv-gib)  ")
    assert memory_lines(plan())[-1].startswith("  = available for the KV cache  ")


# --- the KV cache detail -------------------------------------------------------------------------

def test_the_kv_rows_of_a_full_attention_model() -> None:
    assert kv_lines(plan()) == [
        "KV cache per GPU",
        "  model:                               Qwen3-8B",
        "  GPUs:                                A100-80GB x 1 (TP 1, PP 1)",
        "  compute dtype / KV cache dtype:      bfloat16 / auto",
        "  max-model-len:                       32,768 tokens",
        "  KV bytes per token per GPU:          147,456 B (attention layers)",
        "  block size:                          16 tokens; page 65,536 B per layer",
        "  KV cache blocks per GPU:             24,621",
        "  blocks one full request holds:       2,048",
        "  tokens the KV cache holds:           393,936 (all blocks given to attention)",
        # 12.02 x 32,768 = 393,871.36: whole blocks per request leave 65 tokens unused
        "  max concurrency at max-model-len:    12.02 requests = 393,871 tokens in use",
        "  Tokens in use at max concurrency stay below what the cache holds: whole blocks per request.",
    ]


def test_tp_and_pp_multiply_into_the_gpu_count() -> None:
    assert kv_lines(plan(tp=4, pp=2))[2] == "  GPUs:                                A100-80GB x 8 (TP 4, PP 2)"


def test_a_hybrid_model_tells_its_three_token_figures_apart() -> None:
    """Qwen3.5-style linear-attention layers: state per request, and vLLM's logged figure lower."""
    p = plan(linear_state_bytes_per_seq_per_gpu=25165824, mamba_cache_mode="align", vllm_logged_kv_tokens=98484,
             max_concurrency=10.5)
    lines = kv_lines(p)
    assert lines[4] == ("  linear-attention state per request:  25,165,824 B per GPU; prefix caching on "
                        "(align mode)")
    assert lines[12] == '  vLLM will log "GPU KV cache size":   98,484 tokens'
    assert lines[13:] == [
        "  Three token figures, one pool: the KV cache holds the first if every block served attention;",
        "  each request also pins linear-attention state blocks, so concurrency x length is lower; and",
        "  vLLM's log line divides the pool by its layer groups (attention and linear), so it is lower still.",
    ]
    off = kv_lines(plan(linear_state_bytes_per_seq_per_gpu=25165824, enable_prefix_caching=False))
    assert off[4].endswith("prefix caching off (none mode)")


def test_a_sliding_window_model_says_tokens_in_use_can_exceed_the_cache() -> None:
    lines = kv_lines(plan(sliding_window=4096, max_concurrency=20.0))
    assert lines[-1] == ("  Window layers keep only the last 4,096 tokens (+ one step's batch) per request, so tokens "
                         "in use can exceed the tokens the cache holds.")


def test_a_cache_filled_exactly_adds_no_remark() -> None:
    # 12 requests x 32,768 tokens = 393,216 = 24,576 blocks x 16: nothing left over
    lines = kv_lines(plan(num_gpu_blocks=24576, kv_cache_tokens=393216, max_concurrency=12.0))
    assert lines[-1] == "  max concurrency at max-model-len:    12.00 requests = 393,216 tokens in use"


# --- the rules and the whole text ----------------------------------------------------------------

@pytest.mark.parametrize(("findings", "head"), [
    ([], "Rules (as vllm-stack check, stack v100): no findings"),
    ([error()], "Rules (as vllm-stack check, stack v100): 1 error(s), 0 warning(s)"),
])
def test_the_rules_section_heads_with_the_tally(findings: list[Finding], head: str) -> None:
    lines = finding_lines(findings, "stack v100")
    assert lines[0] == head
    assert lines[1:] == [
        "  ERROR dtype-bf16-unsupported vllm-serving:engine.dtype: bfloat16 needs compute capability 8.0 - "
        "set engine.dtype: half"] * len(findings)


def test_the_text_is_the_four_sections_with_a_blank_line_between() -> None:
    text = capacity_text(plan(), question(), [], "stack v100")
    sections = text.split("\n\n")
    assert [s.splitlines()[0] for s in sections] == [
        "Qwen3-8B on 1 x A100-80GB (TP 1), vLLM v0.19.1",
        "Memory per GPU, GiB (vLLM v0.19.1's accounting, read from release 0.19.1; version from the image tag)",
        "KV cache per GPU",
        "Rules (as vllm-stack check, stack v100): no findings",
    ]


@pytest.mark.parametrize("source", [
    "v1/worker/gpu_worker.py, gpu_model_runner.py: the snapshot and the profiling run",  # two files: the first
    "v1/worker/gpu_worker.py; init_device takes the snapshot first",
    "v1/worker/gpu_worker.py: init_snapshot.total_memory",
])
def test_a_source_whose_file_ends_a_clause_is_cited_by_the_file_alone(source: str) -> None:
    p = plan(memory_terms=(MemoryTerm(name="non_torch", gib=0.14, source=source),))
    [row] = [r for r in memory_rows(p) if r[0].startswith("- non-torch")]
    assert row[2] == "[vllm/v1/worker/gpu_worker.py]"
