"""The encoder's share of the profiling peak: what stays allocated, per release and model runner,
and how the encoder's forward compares with the language model's run (planner/encoder_profile.py).

The expected figures are written out from vLLM's profile_run, not taken from the code under test.
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from tests.planner.test_available_memory_corpus import load_cases
from tests.planner.test_mm_dummy_batch import QWEN3_VL_30B, QWEN25_VL_7B
from vllm_serving.catalog.models import MODELS
from vllm_serving.catalog.vision import VisionEncoder
from vllm_serving.planner.available_memory import GIB, MemoryInputs, ModelShape, estimate_available_memory
from vllm_serving.planner.encoder_profile import EncoderProfile, Runner, encoder_profile
from vllm_serving.planner.mm_dummy_batch import dummy_batch
from vllm_serving.planner.release_accounting import resolve_release
from vllm_serving.planner.startup_case import case_inputs

BF16 = 2
QWEN36_27B = MODELS["Qwen3.6-27B"]


def _profile(version: str, vision: VisionEncoder, *, runner: Runner = "v1", tp: int = 1, max_model_len: int = 65536,
             tokens: int = 8192, seqs: int = 64, data_parallel: bool = False) -> EncoderProfile:
    release = resolve_release(version)[0]
    batch = dummy_batch(release, vision, max_model_len=max_model_len, max_num_batched_tokens=tokens, max_num_seqs=seqs)
    assert batch is not None
    return encoder_profile(release, vision, batch, tp=tp, dtype_bytes=BF16, runner=runner, data_parallel=data_parallel)


def test_v0_11_copies_the_video_into_an_encoder_budget_of_zeros() -> None:
    """v0.11 profile_run: the 12,288-row output (2,048 x 4 wide: deepstack) is copied into zeros
    of 153,600 rows, the original kept by the loop variable; the v1 runner's pixel values (49,152
    patches of 3 x 2 x 16 x 16, bf16) stay too: 2.67 GiB while the language model runs."""
    kept = 12288 * 8192 * BF16 + 153600 * 8192 * BF16 + 49152 * 1536 * BF16
    assert _profile("0.11.2", QWEN3_VL_30B).kept_bytes == kept
    assert _profile("0.12.0", QWEN3_VL_30B).kept_bytes == kept  # 0.12 expands to max tokens per item: the same


def test_from_v0_13_only_the_outputs_and_the_v1_runners_pixels_stay() -> None:
    """One 16,384-token image of Qwen3.6-27B: its 5,120-wide outputs; the v1 runner's local batch
    keeps the 65,536 x 1,536 pixel values, the v2 runner frees them after encoding."""
    vision = QWEN36_27B.vision
    assert vision is not None
    outputs, pixels = 16384 * 5120 * BF16, 65536 * 1536 * BF16
    assert _profile("0.19.1", vision).kept_bytes == outputs + pixels
    assert _profile("0.29.0", vision, runner="v2").kept_bytes == outputs


def test_the_encoder_forward_holds_more_than_its_pixels_and_shrinks_with_tp() -> None:
    vision = QWEN36_27B.vision
    assert vision is not None
    one, four = _profile("0.19.1", vision), _profile("0.19.1", vision, tp=4)
    pixels = 65536 * 1536 * BF16
    # at least the residual stream, its normed copy and the position embeddings of every patch
    assert one.forward_bytes > pixels + 3 * 65536 * 1152 * BF16
    assert pixels < four.forward_bytes < one.forward_bytes
    # data-parallel encoding: one image runs whole on one rank, as with TP 1 (plus its copy of the pixels)
    data = _profile("0.19.1", vision, tp=4, data_parallel=True)
    assert data.forward_bytes == one.forward_bytes + pixels


def test_a_gated_mlp_encoder_holds_its_gate_and_up_projection() -> None:
    """Qwen2.5-VL's SwiGLU keeps gate_up (2 x 3,420) beside the activation and the down
    projection: a wider stage than the same encoder with a plain MLP."""
    plain = QWEN25_VL_7B.model_copy(update={"gated_mlp": False})
    assert _profile("0.19.1", QWEN25_VL_7B).forward_bytes > _profile("0.19.1", plain).forward_bytes


QWEN36_SHAPE = ModelShape(hidden_size=5120, intermediate_size=17408, vocab_size=248320, num_layers=64,
                          num_attention_heads=24, num_key_value_heads=4, head_dim=256, dtype_bytes=2,
                          linear_attention_layers=48)
BASE = MemoryInputs(vllm_version="0.19.1", gpu_total_gib=79.11, gpu_name="NVIDIA H100 80GB HBM3", weights_gib=13.0,
                    model=QWEN36_SHAPE, tp=4, max_num_batched_tokens=8192, max_num_seqs=1024,
                    architecture="Qwen3_5ForConditionalGeneration", compute_capability=(9, 0), sm_count=132,
                    vision=QWEN36_27B.vision, max_model_len=262144)


def _activation(inputs: MemoryInputs) -> float:
    return next(t.gib for t in estimate_available_memory(inputs).terms if t.name == "activation_peak")


def test_the_language_model_runs_on_top_of_what_the_encoder_keeps() -> None:
    """A large sampler (1,024 rows of a 248,320-token vocabulary) is the peak; the encoder adds
    what it keeps, not its own forward."""
    with_encoder = estimate_available_memory(BASE)
    without = estimate_available_memory(replace(BASE, vision=None))
    assert with_encoder.encoder is not None
    extra = _activation(BASE) - _activation(replace(BASE, vision=None))
    assert extra == pytest.approx(with_encoder.encoder.kept_bytes / GIB)
    assert with_encoder.available_kv_gib == pytest.approx(without.available_kv_gib - extra)


def test_a_small_batch_leaves_the_encoder_forward_as_the_peak() -> None:
    """One sequence of 512 tokens: the sampler and the layers are small, the image's forward is not."""
    small = replace(BASE, max_num_seqs=1, max_num_batched_tokens=512, tp=1)
    encoder = estimate_available_memory(small).encoder
    assert encoder is not None
    assert _activation(small) == pytest.approx(encoder.forward_bytes / GIB)


@pytest.mark.parametrize("change", [
    {"skip_mm_profiling": True}, {"mm_limits": {"image": 0, "video": 0}}, {"vision": None}])
def test_flags_that_skip_the_encoder_leave_the_language_model_alone(change: dict[str, object]) -> None:
    inputs = replace(BASE, **change)  # type: ignore[arg-type]
    assert estimate_available_memory(inputs).encoder is None
    assert _activation(inputs) == pytest.approx(_activation(replace(BASE, vision=None)))


def test_a_6_gb_start_fails_on_the_encoders_forward_as_vllm_found() -> None:
    """github.com/Kartikeya2046/Invoice-Processor_VLM vllm_log.txt (v0.23.0): Qwen2.5-VL-3B-AWQ in
    float16 on a 6 GB GPU logs -2.14 GiB of KV cache memory. Its profiling peak is the encoder's
    forward over one 65,536-patch frame pair (the compiled model's native RMSNorm keeps the
    block's input, attention output, sum and normed copy beside the SwiGLU), which the language
    model's run on top of what the encoder keeps does not reach; without it the estimate would be
    about -0.7 GiB, 1.5 GiB optimistic. The estimate is 0.20 GiB below vLLM's figure - the
    v0.18-v0.26 graph-profiling non-torch residue fitted on H100s (0.19 GiB)."""
    case = next(case for case in load_cases() if case["id"] == "kartikeya2046-qwen25-vl-3b-awq-6gb-wsl")
    inputs = case_inputs(case)
    estimate = estimate_available_memory(inputs)
    assert estimate.encoder is not None
    assert _activation(inputs) == pytest.approx(estimate.encoder.forward_bytes / GIB)
    logged = case["logged"]["available_kv_gib"]
    assert -0.25 < estimate.available_kv_gib - logged <= 0  # close, and on the safe side
    without_encoder = estimate_available_memory(replace(inputs, vision=None)).available_kv_gib
    assert without_encoder > logged + 1.0  # the encoder decides


def test_the_v2_runner_the_release_runs_frees_the_pixel_values() -> None:
    """v0.29.0 with VLLM_USE_V2_MODEL_RUNNER: the encoder runner drops its pixel values after
    encoding (v1/worker/gpu/mm/encoder_runner.py); with the switch off the v1 runner's local batch
    keeps them. One 16,384-token image of Qwen3.6-27B: 65,536 patches of 3 x 2 x 16 x 16, bf16."""
    v1, v2 = (estimate_available_memory(replace(BASE, vllm_version="0.29.0", env={"VLLM_USE_V2_MODEL_RUNNER": on}))
              for on in ("0", "1"))
    assert v1.encoder is not None and v2.encoder is not None
    outputs, pixels = 16384 * 5120 * BF16, 65536 * 1536 * BF16
    assert (v1.encoder.kept_bytes, v2.encoder.kept_bytes) == (outputs + pixels, outputs)


def test_data_parallel_encoding_gives_each_rank_its_share_of_the_items() -> None:
    """--mm-encoder-tp-mode data, TP 4, five images (an 81,920-token budget): the busiest rank
    encodes ceil(5 / 4) = 2 with the whole encoder (models/vision.py
    run_dp_sharded_mrope_vision_model), holding every item's pixel values and a concatenated copy
    of its own two. So it holds what one GPU encoding two images holds, plus five images' pixels
    (65,536 patches x 1,536 values, bf16, each)."""
    vision = QWEN36_27B.vision
    assert vision is not None
    release = resolve_release("0.19.1")[0]
    five = dummy_batch(release, vision, max_model_len=65536, max_num_batched_tokens=5 * 16384, max_num_seqs=64)
    two = dummy_batch(release, vision, max_model_len=65536, max_num_batched_tokens=2 * 16384, max_num_seqs=64)
    assert five is not None and two is not None and (five.items, two.items) == (5, 2)
    sharded = encoder_profile(release, vision, five, tp=4, dtype_bytes=BF16, runner="v1", data_parallel=True)
    alone = encoder_profile(release, vision, two, tp=1, dtype_bytes=BF16, runner="v1")
    assert sharded.forward_bytes - alone.forward_bytes == 5 * 65536 * 1536 * BF16
    # what stays: all five outputs (16,384 x 5,120 each) and, on the v1 runner, all five pixel tensors
    assert sharded.kept_bytes == 5 * (16384 * 5120 + 65536 * 1536) * BF16


def test_the_plan_states_the_encoder_batch_and_what_it_keeps() -> None:
    """The line `vllm-stack capacity` prints under the activation peak: the batch as vLLM logs it,
    then the encoder's peak and what it keeps, in GiB (16,384 x 5,120 outputs and 65,536 x 1,536
    pixel values, bf16: 0.34 GiB), and the code it was read from."""
    vision = QWEN36_27B.vision
    assert vision is not None
    profile = _profile("0.19.1", vision)
    head = "1 image item(s) of 16384 tokens (65536 patches), budget 16384: encoder peak "
    assert profile.detail.startswith(head)
    assert profile.detail[len(head):].startswith(f"{profile.forward_bytes / 2**30:.2f} GiB (blocks), kept 0.34 GiB (")
    assert profile.detail.endswith("(v0.13 on): encoder_cache['tmp_<i>'] holds each dummy encoder output while "
                                   "_dummy_run and _dummy_sampler_run run (the v2 runner: "
                                   "v1/worker/gpu/mm/encoder_runner.py profile_encoder_cache))")
    assert 1.0 < profile.forward_bytes / 2**30 < 3.0


def _qwen3_vl_image(tp: int, data_parallel: bool = False) -> EncoderProfile:
    """One 16,384-token image of Qwen3-VL-30B-A3B (v0.19.1, max_model_len 65,536, 8,192 batched
    tokens): 65,536 patches of 3 x 2 x 16 x 16 bf16 values."""
    profile = _profile("0.19.1", QWEN3_VL_30B, tp=tp, data_parallel=data_parallel)
    assert (profile.batch.items, profile.batch.item.embeds, profile.batch.item.patches) == (1, 16384, 65536)
    return profile


# Qwen3-VL-30B-A3B's vision_config: h 1,152, MLP 4,304, 16 heads of 72, 3 deepstack levels of 2,048.
PATCHES, TOKENS, H = 65536, 16384, 1152
PIXELS = PATCHES * 3 * 2 * 16 * 16 * BF16
ROTARY = PATCHES * 72 * 4  # float32 cos/sin, head_dim / 2 each
DEEPSTACK = 3 * 2048 * TOKENS  # the merged deepstack features of every token, alive through the blocks


def test_qwen3_vl_blocks_hold_the_deepstack_features_of_every_token() -> None:
    """qwen3_vl.py `Qwen3_VisionTransformer.forward` on one GPU: each block holds the position
    embeddings (h), its input and normed copy (2h) and the attention's 9h per patch (the MLP's
    3h + 2 x 4,304 is less), beside 3 x 2,048 deepstack elements per token; then the float32 rotary tables and
    the pixel values."""
    blocks = PATCHES * (H + 2 * H + 9 * H) + DEEPSTACK
    assert _qwen3_vl_image(tp=1).forward_bytes == PIXELS + blocks * BF16 + ROTARY


def test_tensor_parallel_encoding_does_not_copy_the_pixels() -> None:
    """TP 2 without --mm-encoder-tp-mode data: every rank encodes the whole image with sharded
    layers (attention 2h + max(9h / 2, h + 8h / 2 + h) = 8h per patch), and holds the pixel
    values once; only data-parallel encoding concatenates a second, local copy."""
    blocks = PATCHES * (H + 8 * H) + DEEPSTACK
    assert _qwen3_vl_image(tp=2).forward_bytes == PIXELS + blocks * BF16 + ROTARY


def test_data_parallel_encoding_copies_the_pixels_on_one_gpu_too() -> None:
    """--mm-encoder-tp-mode data: v0.19.1 model_executor/models/vision.py `is_vit_use_data_parallel`
    asks only the mode, and `run_dp_sharded_mrope_vision_model` has no TP-1 shortcut: it
    concatenates the rank's items' pixels (torch.cat, a new tensor) before the encoder runs, so
    the forward holds the pixels twice even on one GPU."""
    assert _qwen3_vl_image(tp=1, data_parallel=True).forward_bytes == _qwen3_vl_image(tp=1).forward_bytes + PIXELS
