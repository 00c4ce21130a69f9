"""Each release's memory terms, as read from its source (docs/memory-accounting.md)."""

from __future__ import annotations

import msgspec
import pytest

from vllm_serving.planner.available_memory import (
    GIB,
    MemoryInputs,
    ModelShape,
    capture_sizes,
    estimate_available_memory,
    resolve_release,
    sampler_bytes_per_logit,
)

# Llama-3.1-8B (config.json) on one A100-SXM4-80GB (CUDA total 79.25 GiB).
LLAMA_8B = ModelShape(hidden_size=4096, intermediate_size=14336, vocab_size=128256, num_layers=32,
                      num_attention_heads=32, num_key_value_heads=8, head_dim=128)
BASE = MemoryInputs(vllm_version="0.19.1", gpu_total_gib=79.25, gpu_name="NVIDIA A100-SXM4-80GB",
                    weights_gib=14.99, model=LLAMA_8B, gpu_memory_utilization=0.9)


def term(inputs: MemoryInputs, name: str) -> float:
    return next(t.gib for t in estimate_available_memory(inputs).terms if t.name == name)


def with_(**changes: object) -> MemoryInputs:
    return msgspec.structs.replace(BASE, **changes)  # type: ignore[arg-type]


def test_v0_20_subtracts_cuda_graph_memory_by_default_and_v0_19_does_not() -> None:
    v19 = estimate_available_memory(with_(vllm_version="0.19.1"))
    v20 = estimate_available_memory(with_(vllm_version="0.20.2"))
    assert term(with_(vllm_version="0.19.1"), "cuda_graphs") == 0.0
    assert v19.cudagraph_estimate_gib > 0.2
    assert term(with_(vllm_version="0.20.2"), "cuda_graphs") == pytest.approx(v20.cudagraph_estimate_gib)
    assert v19.available_kv_gib - v20.available_kv_gib == pytest.approx(v20.cudagraph_estimate_gib, abs=1e-6)
    # v0.20.0 already subtracts it (same accounting code as v0.20.2).
    assert term(with_(vllm_version="0.20.0"), "cuda_graphs") == pytest.approx(v20.cudagraph_estimate_gib)


def test_the_environment_switch_moves_the_graph_term_in_either_release() -> None:
    assert term(with_(vllm_version="0.19.1", estimate_cudagraphs=True), "cuda_graphs") > 0.2
    assert term(with_(vllm_version="0.20.2", estimate_cudagraphs=False), "cuda_graphs") == 0.0
    # Releases that never estimate graphs ignore the switch (captured from the headroom).
    assert term(with_(vllm_version="0.11.0", estimate_cudagraphs=True), "cuda_graphs") == 0.0


def test_enforce_eager_removes_the_graph_term() -> None:
    eager = estimate_available_memory(with_(vllm_version="0.20.2", enforce_eager=True))
    assert eager.cudagraph_estimate_gib == 0.0
    assert term(with_(vllm_version="0.20.2", enforce_eager=True), "cuda_graphs") == 0.0


def test_tensor_parallelism_adds_the_nccl_term() -> None:
    single = term(with_(tp=1), "non_torch")
    assert term(with_(tp=2), "non_torch") > single
    assert term(with_(tp=8), "non_torch") == term(with_(tp=2), "non_torch")


def test_pipeline_parallelism_alone_adds_the_nccl_term() -> None:
    """A PP-only stack (TP=1, PP=2) has a world of two ranks (vLLM v0.19.1 config/parallel.py
    `world_size = pipeline_parallel_size * tensor_parallel_size`), so
    `init_worker_distributed_environment` (v1/worker/gpu_worker.py) builds NCCL communicators for
    the pipeline group as it does for TP: the same 0.12 GiB (memory_accounting.json `nccl_tp_gib`).
    Without it the planner overstates the KV cache of every PP-only stack."""
    base = term(with_(vllm_version="0.17.1", tp=1, pp=1), "non_torch")
    assert term(with_(vllm_version="0.17.1", tp=1, pp=2), "non_torch") == pytest.approx(base + 0.12)
    assert term(with_(vllm_version="0.17.1", tp=1, pp=4), "non_torch") == pytest.approx(base + 0.12)


def test_each_release_defaults_its_own_utilization() -> None:
    unset = with_(gpu_memory_utilization=None)
    assert estimate_available_memory(msgspec.structs.replace(unset, vllm_version="0.19.1")).requested_gib == (
        pytest.approx(0.9 * 79.25))
    assert estimate_available_memory(msgspec.structs.replace(unset, vllm_version="0.20.2")).requested_gib == (
        pytest.approx(0.92 * 79.25))
    # The extensible KV cache budgets all of the GPU when the flag is unset, then trims after warmup.
    assert estimate_available_memory(msgspec.structs.replace(unset, vllm_version="0.34.0")).requested_gib == (
        pytest.approx(79.25))


def test_v0_19_rounds_the_request_up_to_a_byte_and_v0_11_truncates() -> None:
    odd = with_(gpu_total_gib=22.05, gpu_memory_utilization=0.333)
    exact = 22.05 * GIB * 0.333
    assert estimate_available_memory(msgspec.structs.replace(odd, vllm_version="0.19.1")).requested_gib * GIB == (
        pytest.approx(int(exact) + 1, abs=0.5))
    assert estimate_available_memory(msgspec.structs.replace(odd, vllm_version="0.11.0")).requested_gib * GIB == (
        pytest.approx(int(exact), abs=0.5))


@pytest.mark.parametrize(("gpu", "total", "release", "tokens", "seqs"), [
    ("NVIDIA A100-SXM4-80GB", 79.25, "0.19.1", 2048, 256),   # A100s keep the small defaults
    ("NVIDIA H100 80GB HBM3", 79.19, "0.19.1", 8192, 1024),
    ("NVIDIA L4", 22.05, "0.19.1", 2048, 256),
    ("NVIDIA B200", 178.36, "0.20.2", 8192, 1024),
    ("NVIDIA B200", 178.36, "0.34.0", 16384, 1024),          # the 160 GiB tier is new
    ("NVIDIA GB10", 121.69, "0.34.0", 2048, 256),            # a Spark keeps the small tier
])
def test_batch_defaults_follow_the_gpu_and_the_release(gpu: str, total: float, release: str,
                                                        tokens: int, seqs: int) -> None:
    estimate = estimate_available_memory(with_(gpu_name=gpu, gpu_total_gib=total, vllm_version=release))
    assert (estimate.max_num_batched_tokens, estimate.max_num_seqs) == (tokens, seqs)


def test_the_offline_llm_class_profiles_more_tokens_than_the_server() -> None:
    assert estimate_available_memory(with_(usage_context="llm")).max_num_batched_tokens == 8192


def test_max_num_seqs_never_exceeds_the_token_budget() -> None:
    assert estimate_available_memory(with_(max_num_batched_tokens=128)).max_num_seqs == 128


def test_more_batched_tokens_raise_the_activation_peak() -> None:
    small = term(with_(max_num_batched_tokens=2048, max_num_seqs=32), "activation_peak")
    large = term(with_(max_num_batched_tokens=16384, max_num_seqs=32), "activation_peak")
    assert large > 3 * small


def test_more_sequences_raise_the_sampler_peak() -> None:
    assert term(with_(max_num_seqs=1024, max_num_batched_tokens=8192), "activation_peak") > term(
        with_(max_num_seqs=128, max_num_batched_tokens=8192), "activation_peak")


def test_the_sort_sampler_needs_more_than_twice_flashinfers_memory() -> None:
    """PyTorch's top-k/top-p sorts the logits (values + int64 indices, and CUB's alternate buffers
    while the sort runs: 38 bytes a logit at 256 rows); FlashInfer does not (14)."""
    sort = term(with_(sampler="torch_sort"), "activation_peak")
    flashinfer = term(with_(sampler="flashinfer"), "activation_peak")
    assert 2.5 < sort / flashinfer < 2.8


def test_the_sort_sampler_takes_most_per_logit_between_2_and_127_rows() -> None:
    """PyTorch's stable sort takes its full-sort path (two int2 index buffers) below 128 segments."""
    assert sampler_bytes_per_logit("torch_sort", 1) == 38
    assert sampler_bytes_per_logit("torch_sort", 2) == sampler_bytes_per_logit("torch_sort", 127) == 50
    assert sampler_bytes_per_logit("torch_sort", 128) == sampler_bytes_per_logit("torch_sort", 4096) == 38
    assert sampler_bytes_per_logit("flashinfer", 256) == sampler_bytes_per_logit("triton", 8) == 14


def test_speculative_decoding_adds_draft_weights_and_the_rejection_pass() -> None:
    plain = estimate_available_memory(BASE)
    mtp = estimate_available_memory(with_(draft_weights_gib=1.5, num_speculative_tokens=1))
    assert term(with_(draft_weights_gib=1.5), "weights") == pytest.approx(14.99 + 1.5)
    assert term(with_(num_speculative_tokens=1), "activation_peak") > term(BASE, "activation_peak")
    assert plain.available_kv_gib - mtp.available_kv_gib > 1.5


def test_capture_sizes_match_what_v0_19_1_logged() -> None:
    """sridhar1804 log: 'Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)'."""
    sizes = capture_sizes(tokens=2048, seqs=256)
    assert (len(sizes), sizes[-1]) == (51, 512)
    assert len([size for size in sizes if size <= 256]) == 35


def test_a_tag_resolves_to_the_release_whose_accounting_was_read() -> None:
    assert resolve_release("v0.19.1-cu130")[0].version == (0, 19, 1)
    assert resolve_release("v0.19.1-cu130")[1]
    release, exact = resolve_release("0.22.0")
    assert release.version == (0, 22, 1) and not exact  # 0.22.1 was read, 0.22.0 was not: same minor
    assert resolve_release("0.26.1rc1.dev156")[0].version == (0, 26, 0)
    assert resolve_release("latest")[0].version == (0, 34, 0)
    with pytest.raises(ValueError, match="vllm-serving:image.tag"):
        resolve_release("v0.9.2")


def test_every_term_names_the_source_it_was_read_from() -> None:
    for release in ("0.10.1.1", "0.11.0", "0.19.1", "0.20.2", "0.34.0"):
        for item in estimate_available_memory(with_(vllm_version=release)).terms:
            assert ".py" in item.source, (release, item.name)


def test_graph_memory_grows_with_the_graphs_times_the_layers() -> None:
    """0.25 MiB a layer and graph on the v1 runner: 32 layers x (51 piecewise + 35 FULL sizes)
    at max_num_seqs 256; halving the layers halves it, TP does not move it."""
    estimate = estimate_available_memory(with_(vllm_version="0.20.2", max_num_seqs=256))
    assert estimate.cudagraph_estimate_gib == pytest.approx(0.25 * 32 * 86 / 1024)
    assert estimate_available_memory(with_(vllm_version="0.20.2", max_num_seqs=256, tp=2)).cudagraph_estimate_gib == (
        pytest.approx(estimate.cudagraph_estimate_gib))


def test_graph_profiling_inside_the_memory_profile_counts_in_non_torch() -> None:
    """v0.18-v0.26 profile the graphs inside memory_profiling: 0.19 GiB more non-torch on one
    GPU, 1.95 GiB with TP; eager starts and v0.27 (which profiles outside) add nothing."""
    base = term(with_(vllm_version="0.17.1"), "non_torch")
    assert term(with_(vllm_version="0.19.1"), "non_torch") == pytest.approx(base + 0.19)
    assert term(with_(vllm_version="0.19.1", tp=2), "non_torch") == pytest.approx(base + 0.12 + 1.95)
    assert term(with_(vllm_version="0.19.1", enforce_eager=True), "non_torch") == pytest.approx(base)
    assert term(with_(vllm_version="0.27.1", tp=2), "non_torch") == pytest.approx(base + 0.12)


def test_a_cold_compile_adds_tritons_benchmark_buffer_to_the_forward_pass() -> None:
    """One sequence, so the forward pass is the peak: a first start autotunes with a 256 MiB
    L2-flushing buffer alive; a warm cache or an eager start does not."""
    cold = term(with_(max_num_seqs=1), "activation_peak")
    warm = term(with_(max_num_seqs=1, compile_cache_warm=True), "activation_peak")
    assert cold - warm == pytest.approx(0.25)


def test_the_gpu_decides_whether_the_flashinfer_sampler_is_profiled() -> None:
    """From v0.21 FlashInfer's sampler is the default where it runs, from compute capability 7.5
    (v1/sample/ops/topk_topp_sampler.py): a V100 (7.0) profiles the Triton sampler instead, and
    says why."""
    v100 = estimate_available_memory(with_(vllm_version="0.21.0", compute_capability=(7, 0)))
    a100 = estimate_available_memory(with_(vllm_version="0.21.0", compute_capability=(8, 0)))
    assert v100.sampler is not None and a100.sampler is not None
    assert (v100.sampler.sampler, a100.sampler.sampler) == ("triton", "flashinfer")
    assert "compute capability" in v100.sampler.why


def test_speculative_tokens_raise_the_largest_capture_size() -> None:
    """config/vllm.py _set_cudagraph_sizes: the largest size is min(max_num_seqs x (1 + speculative
    tokens) x 2, 512, max_num_batched_tokens). 64 sequences: 128 alone (1, 2, 4 and 8..128 by 8:
    19 sizes); with 3 speculative tokens 512 (1, 2, 4, 8..248 by 8, 256..512 by 16: 51 sizes)."""
    assert (len(capture_sizes(tokens=2048, seqs=64)), capture_sizes(tokens=2048, seqs=64)[-1]) == (19, 128)
    with_mtp = capture_sizes(tokens=2048, seqs=64, speculative_tokens=3)
    assert (len(with_mtp), with_mtp[-1]) == (51, 512)


def test_pipeline_stages_split_the_graph_memory_with_the_layers() -> None:
    """Each stage captures graphs of its own layers only: PP 2 holds 16 of the 32 layers."""
    one = estimate_available_memory(with_(vllm_version="0.20.2", max_num_seqs=256)).cudagraph_estimate_gib
    two = estimate_available_memory(with_(vllm_version="0.20.2", max_num_seqs=256, pp=2)).cudagraph_estimate_gib
    assert two == pytest.approx(one / 2) == pytest.approx(0.25 * 16 * 86 / 1024)


def test_a_dense_hybrid_model_stays_on_the_v1_runner_in_v0_26() -> None:
    """vLLM v0.26.0 config/vllm.py `_is_default_v2_model_runner_model` returns False for
    `model_config.is_hybrid` before asking whether the model is dense: Qwen3.5-27B's 48 Gated
    DeltaNet layers keep it on the v1 runner, whose profiling samples with FlashInfer (the
    default from v0.21 on CC 9.0), not the v2 runner's greedy model-dtype pass."""
    qwen35 = ModelShape(hidden_size=5120, intermediate_size=17408, vocab_size=248320, num_layers=64,
                        num_attention_heads=24, num_key_value_heads=4, head_dim=256, linear_attention_layers=48)
    estimate = estimate_available_memory(with_(
        vllm_version="0.26.0", gpu_total_gib=79.19, gpu_name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0),
        weights_gib=50.1, model=qwen35, architecture="Qwen3_5ForConditionalGeneration"))
    assert estimate.sampler is not None and estimate.sampler.sampler == "flashinfer"
    assert "sampler flashinfer" in next(t.source for t in estimate.terms if t.name == "activation_peak")


def test_a_sampler_given_by_the_caller_is_said_to_be_given() -> None:
    # the calibration replays a log with the sampler that run used: the plan says it was given, not chosen
    estimate = estimate_available_memory(with_(sampler="torch_sort"))
    assert estimate.sampler is not None and (estimate.sampler.sampler, estimate.sampler.why) == ("torch_sort", "given")
    assert next(t.source for t in estimate.terms if t.name == "activation_peak").endswith("sampler torch_sort: given")
