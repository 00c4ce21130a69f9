"""The sampler the profiling run exercises, as each release's source decides it from the image,
the environment, the GPU and the model (planner/sampler_peak.py)."""

from __future__ import annotations

import pytest

from vllm_serving.planner.release_accounting import resolve_release
from vllm_serving.planner.sampler_peak import (
    ModelKind,
    env_flag,
    sampler_choice,
    sampler_peak_bytes,
    triton_buffer_bytes,
    uses_v2_runner,
)

DENSE = ModelKind("LlamaForCausalLM")
QWEN3 = ModelKind("Qwen3ForCausalLM")


def choice(version: str, rows: int = 256, env: dict[str, str] | None = None, installed: bool = True,
           capability: tuple[int, int] | None = (8, 0), kind: ModelKind = DENSE) -> str:
    release, _ = resolve_release(version)
    return sampler_choice(release, rows=rows, env=env or {}, flashinfer_installed=installed, capability=capability,
                          kind=kind).sampler


def test_v0_10_samples_with_flashinfer_when_the_image_has_it() -> None:
    assert choice("0.10.2") == "flashinfer"
    assert choice("0.10.2", installed=False) == "torch_sort"  # pip's wheel: FlashInfer is an extra
    assert choice("0.10.2", env={"VLLM_USE_FLASHINFER_SAMPLER": "0"}) == "torch_sort"


def test_from_v0_11_2_flashinfer_is_opt_in_and_pytorch_sorts() -> None:
    assert choice("0.13.0") == "torch_sort"
    assert choice("0.13.0", env={"VLLM_USE_FLASHINFER_SAMPLER": "1"}) == "flashinfer"


def test_from_v0_17_triton_takes_eight_rows_and_more() -> None:
    assert choice("0.19.1", rows=8) == "triton"
    assert choice("0.19.1", rows=7) == "torch_sort"
    assert choice("0.16.0", rows=256) == "torch_sort"


def test_from_v0_21_flashinfer_is_the_default_where_it_runs() -> None:
    assert choice("0.21.0") == "flashinfer"
    assert choice("0.21.0", capability=(7, 0)) == "triton"  # V100: below FlashInfer's 7.5
    assert choice("0.21.0", env={"VLLM_USE_FLASHINFER_SAMPLER": "0"}) == "triton"


@pytest.mark.parametrize(("version", "kind", "v2"), [
    ("0.21.0", QWEN3, False),
    ("0.22.1", QWEN3, True),                                         # listed, dense, unquantized
    ("0.22.1", ModelKind("Qwen3ForCausalLM", quantized=True), False),
    ("0.22.1", DENSE, False),                                        # not listed yet
    ("0.23.0", DENSE, True),
    ("0.25.1", DENSE, True),                                         # every dense model
    ("0.25.1", ModelKind("Qwen3MoeForCausalLM", moe=True), False),   # an unlisted MoE
    ("0.25.1", ModelKind("Qwen2MoeForCausalLM", moe=True), True),    # a listed MoE
    ("0.26.0", ModelKind("Qwen3_5ForConditionalGeneration", hybrid=True), False),
    ("0.29.0", ModelKind("Qwen3_5ForConditionalGeneration", hybrid=True), True),  # all from v0.29
])
def test_the_v2_model_runner_follows_each_releases_default(version: str, kind: ModelKind, v2: bool) -> None:
    assert uses_v2_runner(resolve_release(version)[0], kind, {}) is v2


def test_the_environment_overrides_the_runner_default() -> None:
    release = resolve_release("0.29.0")[0]
    assert not uses_v2_runner(release, DENSE, {"VLLM_USE_V2_MODEL_RUNNER": "0"})
    assert uses_v2_runner(resolve_release("0.22.1")[0], DENSE, {"VLLM_USE_V2_MODEL_RUNNER": "1"})
    assert not uses_v2_runner(resolve_release("0.21.0")[0], DENSE, {"VLLM_USE_V2_MODEL_RUNNER": "1"})  # no v2 yet


def test_the_v2_runner_samples_greedily_until_v0_33_adds_a_warm_up_pass() -> None:
    assert choice("0.29.0") == "v2_model_dtype"
    assert choice("0.33.0") == "v2_warmup_flashinfer"
    assert choice("0.33.0", env={"VLLM_USE_FLASHINFER_SAMPLER": "0"}) == "v2_warmup_triton"


def test_the_triton_buffer_is_a_vocabulary_row_per_sm() -> None:
    """apply_top_k_top_p_triton: min(next_pow2(min(SMs, rows)), SMs) rows of fp32."""
    assert triton_buffer_bytes("triton", 256, 151936, 108) == 108 * 151936 * 4
    assert triton_buffer_bytes("triton", 100, 151936, 132) == 128 * 151936 * 4
    assert triton_buffer_bytes("flashinfer", 256, 151936, 108) == 0


def test_bytes_per_logit_of_each_path() -> None:
    def peak(sampler: str, rows: int) -> int:
        return sampler_peak_bytes(sampler, rows=rows, vocab=1000, sm_count=None, speculative=False)  # type: ignore[arg-type]

    assert peak("v2_model_dtype", 1024) == 1024 * 1000 * 2
    assert peak("flashinfer", 1024) == 1024 * 1000 * 14
    assert peak("torch_sort", 64) == 64 * 1000 * 50


FI_ENV = "VLLM_USE_FLASHINFER_SAMPLER"


@pytest.mark.parametrize(("version", "rows", "env", "installed", "capability", "sampler", "why"), [
    ("0.10.2", 256, {}, True, (8, 0), "flashinfer", "FlashInfer is installed"),
    ("0.10.2", 256, {}, False, (8, 0), "torch_sort", "FlashInfer is not installed in the image; PyTorch's sort"),
    ("0.10.2", 256, {FI_ENV: "0"}, True, (8, 0), "torch_sort",
     "FlashInfer is installed but VLLM_USE_FLASHINFER_SAMPLER=0; PyTorch's sort"),
    ("0.13.0", 256, {}, True, (8, 0), "torch_sort",
     "FlashInfer only with VLLM_USE_FLASHINFER_SAMPLER=1 in this release; PyTorch's sort"),
    ("0.13.0", 256, {FI_ENV: "1"}, True, (8, 0), "flashinfer",
     "FlashInfer only with VLLM_USE_FLASHINFER_SAMPLER=1 in this release (set)"),
    ("0.19.1", 8, {}, True, (8, 0), "triton",
     "FlashInfer only with VLLM_USE_FLASHINFER_SAMPLER=1 in this release; Triton top-k/top-p for 8 rows and more"),
    ("0.19.1", 7, {}, True, (8, 0), "torch_sort",
     "FlashInfer only with VLLM_USE_FLASHINFER_SAMPLER=1 in this release; PyTorch's sort below 8 rows"),
    ("0.21.0", 256, {}, True, (8, 0), "flashinfer",
     "FlashInfer by default from v0.21 (VLLM_USE_FLASHINFER_SAMPLER unset or 1)"),
    ("0.21.0", 256, {FI_ENV: "0"}, True, (8, 0), "triton",
     "VLLM_USE_FLASHINFER_SAMPLER=0; Triton top-k/top-p for 8 rows and more"),
    ("0.21.0", 4, {}, True, (7, 0), "torch_sort",
     "FlashInfer's sampler does not run on this compute capability; PyTorch's sort below 8 rows"),
    ("0.25.1", 256, {}, True, (8, 0), "v2_model_dtype", "the v2 model runner samples the dummy rows greedily"),
    ("0.34.0", 256, {}, True, (7, 0), "v2_warmup_triton",
     "the v2 model runner's warm-up pass; FlashInfer's sampler does not run on this compute capability"),
])
def test_the_plan_says_why_the_profiling_run_samples_as_it_does(
        version: str, rows: int, env: dict[str, str], installed: bool, capability: tuple[int, int], sampler: str,
        why: str) -> None:
    """The reason a user reads beside the sampler's share of the peak, for each path."""
    release, _ = resolve_release(version)
    found = sampler_choice(release, rows=rows, env=env, flashinfer_installed=installed, capability=capability,
                           kind=DENSE)
    assert (found.sampler, found.why) == (sampler, why)


@pytest.mark.parametrize(("capability", "sampler"), [
    ((7, 0), "triton"), ((7, 5), "flashinfer"), ((9, 0), "flashinfer"), ((12, 1), "flashinfer"), ((12, 2), "triton"),
])
def test_flashinfers_sampler_runs_from_cc_7_5_to_12_1(capability: tuple[int, int], sampler: str) -> None:
    """v0.21.0 v1/attention/backends/flashinfer.py FlashInferBackend.supports_compute_capability:
    7.5 <= capability <= 12.1 (T4 to GB10), which topk_topp_sampler.py asks before using it."""
    assert choice("0.21.0", capability=capability) == sampler


def test_speculative_decoding_lifts_a_small_samplers_peak_to_the_rejection_pass() -> None:
    """FlashInfer's sampler holds 14 bytes a logit (bf16 logits 2, an fp32 copy 4, top-k masked
    logits 4, probabilities 4); with a draft, GPUModelRunner._dummy_sampler_run also runs the
    rejection sampler over (1 + 1) x rows target logits: 2 x (bf16 2 + fp32 probabilities 4 + the
    recovered-token pass 4) = 20 bytes a row-and-vocab element, which then decides. PyTorch's sort
    (38) stays above it."""
    logits = 256 * 151936
    assert sampler_peak_bytes("flashinfer", rows=256, vocab=151936, sm_count=None, speculative=False) == logits * 14
    assert sampler_peak_bytes("flashinfer", rows=256, vocab=151936, sm_count=None, speculative=True) == logits * 20
    assert sampler_peak_bytes("torch_sort", rows=256, vocab=151936, sm_count=None, speculative=True) == logits * 38


@pytest.mark.parametrize(("value", "read"), [("1", True), ("0", False), (" 1 ", True), ("true", None), ("", None)])
def test_an_env_switch_is_read_as_vllms_envs_reads_it(value: str, read: bool | None) -> None:
    # envs.py maybe_convert_bool is bool(int(value)): "true" is no number (vLLM fails to read it),
    # so the plan does not take it for a choice
    assert env_flag({"VLLM_USE_V2_MODEL_RUNNER": value}, "VLLM_USE_V2_MODEL_RUNNER") is read
