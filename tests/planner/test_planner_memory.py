"""The planner's KV memory is the per-release estimate, fed from the stack: its image tag's
release, its batch flags, eager/compile mode in extraArgs, speculative decoding, the env switch."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.paths import stack_file
from vllm_serving.catalog.checkpoint import derived_intermediate_size
from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import find_model
from vllm_serving.planner.available_memory import MemoryInputs, estimate_available_memory
from vllm_serving.planner.capacity import CapacityInputs, CapacityPlan, plan, plan_capacity
from vllm_serving.planner.memory_budget import (
    MultimodalFlags,
    compile_flags,
    model_shape,
    multimodal_flags,
    version_for_tag,
)
from vllm_serving.planner.weights_per_gpu import weights_per_gpu
from vllm_serving.settings import StackSettings
from vllm_serving.spec import resolve
from vllm_serving.stack_files.loader import load_settings, read_stack_file


def _settings(stack: str) -> StackSettings:
    return load_settings(read_stack_file(stack_file(stack)))


def _plan(stack: str, image: dict[str, Any] | None = None, **engine: Any) -> CapacityPlan:
    settings = _settings(stack)
    update: dict[str, Any] = {"engine": settings.engine.model_copy(update=engine)}
    if image is not None:
        update["image"] = settings.image.model_copy(update=image)
    return plan_capacity(resolve(settings.model_copy(update=update), stack))


def _term(result: CapacityPlan, name: str) -> float:
    return next(t.gib for t in result.memory_terms if t.name == name)


@pytest.mark.parametrize("stack", ["v100", "a100"])
def test_available_kv_is_the_budget_less_every_term(stack: str) -> None:
    result = plan_capacity(resolve(_settings(stack), stack))
    assert result.available_kv_gib == pytest.approx(result.budget_gib - sum(t.gib for t in result.memory_terms))
    assert {t.name for t in result.memory_terms} >= {"weights", "activation_peak", "non_torch", "cuda_graphs"}
    assert all(".py" in t.source or "/" in t.source for t in result.memory_terms)


def test_the_planner_feeds_the_estimator_the_catalog_facts() -> None:
    """A dense model on one GPU: the plan's KV memory is estimate_available_memory's for the
    catalog's CUDA total, weights, config.json shape and vision encoder, nothing added."""
    model, gpu = find_model("Qwen3.5-27B"), GPUS["H100-80GB"]
    assert model is not None and model.intermediate_size == 17408
    inputs = CapacityInputs(model=model, gpu=gpu, tp=2, vllm_version=(0, 20, 2))
    estimate = estimate_available_memory(MemoryInputs(
        vllm_version="0.20.2", gpu_total_gib=79.11, gpu_name=gpu.product_label,
        weights_gib=weights_per_gpu(model, tp=2, capability=gpu.compute_capability).per_gpu_gib,
        model=model_shape(model, 2), tp=2, compute_capability=gpu.compute_capability, sm_count=gpu.sm_count,
        architecture=model.architecture, vision=model.vision, max_model_len=model.max_position_embeddings))
    assert plan(inputs).available_kv_gib == pytest.approx(estimate.available_kv_gib)
    assert plan(inputs).gpu_total_gib == 79.11  # CUDA's total, not nvidia-smi's 79.65


@pytest.mark.parametrize(("tag", "version", "graphs_subtracted"), [
    ("v0.19.1", "0.19.1", False),
    ("v0.20.2", "0.20.2", True),
    ("v0.20.0-cu129", "0.20.0", True),  # not in the release registry: its version number
    ("latest", "0.19.1", False),  # a moving tag: the project's pin
])
def test_the_image_tag_picks_the_release_whose_accounting_applies(tag: str, version: str,
                                                                   graphs_subtracted: bool) -> None:
    result = _plan("v100", image={"tag": tag})
    assert result.vllm_version == version
    assert (result.cuda_graph_gib > 0) is graphs_subtracted
    assert result.cudagraph_estimate_gib > 0  # estimated either way; v0.19 only logs it


def test_v0_20_default_utilization_is_0_92() -> None:
    assert _plan("v100", image={"tag": "v0.20.2"}, gpu_memory_utilization=None).gpu_memory_utilization == 0.92
    assert _plan("v100", gpu_memory_utilization=None).gpu_memory_utilization == 0.9


def test_batch_flags_move_the_activation_peak_and_the_graphs() -> None:
    small = _plan("v100", max_num_batched_tokens=2048, max_num_seqs=64)
    large = _plan("v100", max_num_batched_tokens=16384, max_num_seqs=256)
    assert (large.max_num_batched_tokens, large.max_num_seqs) == (16384, 256)
    assert large.activation_gib > small.activation_gib
    assert large.cudagraph_estimate_gib > small.cudagraph_estimate_gib
    assert large.available_kv_gib < small.available_kv_gib


@pytest.mark.parametrize(("extra", "mode"), [
    (("--enforce-eager",), "none"),
    (("-O0",), "none"),
    (("-O1",), "piecewise"),
    (("--optimization-level", "1"), "piecewise"),
    (("--compilation-config", '{"cudagraph_mode": "NONE"}'), "none"),
    (("--compilation-config.cudagraph_mode", "PIECEWISE"), "piecewise"),
])
def test_extra_args_set_the_cuda_graphs(extra: tuple[str, ...], mode: str) -> None:
    result = _plan("v100", image={"tag": "v0.20.2"}, extra_args=extra)
    default = _plan("v100", image={"tag": "v0.20.2"})
    assert result.cudagraph_mode == mode and default.cudagraph_mode == "full_and_piecewise"
    assert result.cudagraph_estimate_gib < default.cudagraph_estimate_gib
    assert result.available_kv_gib > default.available_kv_gib


@pytest.mark.parametrize("mode", ["FULL", "FULL_DECODE_ONLY", "full_and_piecewise"])
def test_full_graph_modes_are_counted_as_the_default_full_and_piecewise(mode: str) -> None:
    # config/compilation.py CUDAGraphMode: FULL and FULL_DECODE_ONLY capture full graphs up to
    # max_num_seqs; the estimate counts them as FULL_AND_PIECEWISE, an upper bound, so a plan never
    # promises KV memory the captures take (names read case-insensitively, as vLLM's enum parse)
    extra = ("--compilation-config", json.dumps({"cudagraph_mode": mode}))
    result = _plan("v100", image={"tag": "v0.20.2"}, extra_args=extra)
    default = _plan("v100", image={"tag": "v0.20.2"})
    assert result.cudagraph_mode == "full_and_piecewise"
    assert result.cudagraph_estimate_gib == default.cudagraph_estimate_gib


def test_compile_flags_follow_the_release_parser() -> None:
    """v0.11's -O is --compilation-config (a compilation level), not the optimization level."""
    assert compile_flags("v0.11.0", ("-O0",)) == (False, None)
    assert compile_flags("v0.19.1", ("-O0",)) == (False, "none")
    assert compile_flags("v0.19.1", ("--enforce-eager", "--no-enforce-eager")) == (False, None)


def test_the_env_switch_subtracts_graphs_on_v0_19() -> None:
    plain = _plan("v100")
    switched = _plan("v100", env={"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "1"})
    assert plain.cuda_graph_gib == 0 and switched.cuda_graph_gib == pytest.approx(plain.cudagraph_estimate_gib)


def test_mtp_loads_its_draft_layer_beside_the_weights() -> None:
    with_mtp = _plan("a100")
    without = _plan("a100", speculative_config=None)
    assert without.draft_weights_gib_per_gpu == 0
    # one decoder layer and the fc of Qwen3.6-27B-FP8, split over TP 4: about 0.13 GiB
    assert 0.05 < with_mtp.draft_weights_gib_per_gpu < 0.3
    both = with_mtp.weights_gib_per_gpu + with_mtp.draft_weights_gib_per_gpu
    assert _term(with_mtp, "weights") == pytest.approx(both)


def test_graph_profiling_inside_the_memory_profile_counts_as_non_torch() -> None:
    """v0.18-v0.26 profile CUDA graphs inside memory_profiling: with TP the captured all-reduce
    leaves about 2 GiB outside torch (the v0.19.0 H100 breakdowns: 2.06-2.21 GiB); eager starts
    capture nothing, and v0.27 profiles the graphs outside the block."""
    compiled, eager = _plan("v100"), _plan("v100", extra_args=["--enforce-eager"])
    assert compiled.non_torch_gib == pytest.approx(eager.non_torch_gib + 1.95)
    assert "linear_attention_kernels" not in {t.name for t in compiled.memory_terms}


def test_a_gpu_without_a_measured_total_derives_it() -> None:
    gpu = GPUS["A800-80GB"]
    assert gpu.cuda_total_gib is None
    assert gpu.cuda_memory_gib == pytest.approx(80 * 0.985)
    measured = [g.cuda_total_gib / g.memory_gib for g in GPUS.values() if g.cuda_total_gib is not None]
    assert measured and all(0.96 < ratio <= 1.0 for ratio in measured)


def test_a_model_without_intermediate_size_derives_it_from_its_parameters() -> None:
    """Llama-3.1-8B's config.json: 14336; from 8.03B parameters the derivation lands near it."""
    model = find_model("Qwen3.5-27B")
    assert model is not None
    llama = model.model_copy(update=dict(
        params_billion=8.03, num_hidden_layers=32, full_attention_layers=32, linear_attention=None,
        hidden_size=4096, vocab_size=128256, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
        intermediate_size=None))
    assert derived_intermediate_size(llama) == pytest.approx(14336, rel=0.05)


def test_version_sources_are_named() -> None:
    assert version_for_tag("v0.19.1")[1].startswith("image tag v0.19.1")
    assert "pinned" in version_for_tag(None)[1]
    # a stack without image.tag, and one on a moving tag, say which it was
    assert version_for_tag(None, (0, 19, 1)) == ((0, 19, 1), "the project's pinned v0.19.1 (no image tag)")
    assert version_for_tag("latest", (0, 19, 1)) == ((0, 19, 1), "the project's pinned v0.19.1 (moving tag latest)")


def test_the_weights_not_fitting_is_the_estimate_going_negative() -> None:
    model = find_model("Qwen3.5-27B")
    assert model is not None
    result = plan(CapacityInputs(model=model, gpu=GPUS["V100-32GB"], dtype="half"))
    assert not result.weights_fit and result.available_kv_gib < 0


def test_the_vision_encoder_is_profiled_unless_the_stack_turns_it_off() -> None:
    """The shipped Qwen3.5/3.6 stacks load a vision tower: vLLM encodes a dummy 16,384-token image
    before sizing the KV cache and keeps its pixels and outputs through the language model's run.
    --language-model-only, zero --limit-mm-per-prompt counts and --skip-mm-profiling leave it out."""
    full = _plan("a100")
    assert "multimodal encoder: 1 image item(s) of 16384 tokens" in next(
        t.source for t in full.memory_terms if t.name == "activation_peak")
    text_only = _plan("a100", extra_args=["--language-model-only"])
    zero = _plan("a100", extra_args=["--limit-mm-per-prompt", '{"image": 0, "video": 0}'])
    skipped = _plan("a100", extra_args=["--skip-mm-profiling"])
    assert _term(zero, "activation_peak") == _term(skipped, "activation_peak") == _term(text_only, "activation_peak")
    assert _term(full, "activation_peak") > _term(text_only, "activation_peak")
    assert full.available_kv_gib < zero.available_kv_gib


def test_multimodal_flags_are_read_as_vllm_parses_them() -> None:
    flags = multimodal_flags("v0.19.1", [
        "--limit-mm-per-prompt", '{"image": 2, "video": {"count": 0, "num_frames": 8}}',
        "--limit-mm-per-prompt.audio=0", "--mm-encoder-tp-mode", "data",
        "--mm-processor-kwargs", '{"max_pixels": 1003520}', "--skip-mm-profiling"])
    assert dict(flags.limits) == {"image": 2, "video": 0, "audio": 0}
    assert flags.encoder_data_parallel and flags.skip_profiling and flags.image_max_pixels == 1003520
    assert multimodal_flags("v0.19.1", ["--mm-encoder-tp-mode", "weights"]) == MultimodalFlags()


def test_a_smaller_processor_limit_profiles_smaller_images() -> None:
    """--mm-processor-kwargs '{"max_pixels": ...}' lowers the image processor's limit: 1,003,520
    pixels are 980 tokens of 32 x 32 pixels (a 28 x 35 grid), two of them in the A100's 2,048-token
    budget (videos left out: their limit is the video processor's)."""
    small = _plan("a100", extra_args=["--mm-processor-kwargs", '{"max_pixels": 1003520}',
                                      "--limit-mm-per-prompt", '{"video": 0}'])
    source = next(t.source for t in small.memory_terms if t.name == "activation_peak")
    assert "2 image item(s) of 980 tokens (3920 patches), budget 2048" in source
