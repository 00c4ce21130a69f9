"""The dummy batch each release profiles a vision-language model with, against what vLLM logged.

vLLM prints the batch it encodes before sizing the KV cache ("Encoder cache will be initialized
with a budget of N tokens, and profiled with K <modality> items"); the planner derives the same
from the encoder's config, the processor's pixel limits and the release's rules
(planner/mm_dummy_batch.py). Every corpus case that logs the line is checked, plus public lines
of Qwen2.5-VL and Qwen3-VL starts quoted below with their source.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.planner.test_available_memory_corpus import load_cases
from vllm_serving.catalog.models import MODELS
from vllm_serving.catalog.vision import VisionEncoder
from vllm_serving.planner.available_memory import estimate_available_memory
from vllm_serving.planner.mm_dummy_batch import dummy_batch, largest_items
from vllm_serving.planner.release_accounting import resolve_release
from vllm_serving.planner.startup_case import case_inputs

QWEN3_VL_30B = VisionEncoder(
    family="qwen3_vl", depth=27, hidden_size=1152, intermediate_size=4304, num_heads=16, patch_size=16,
    temporal_patch_size=2, spatial_merge_size=2, out_hidden_size=2048, deepstack_layers=3,
    image_max_pixels=16_777_216, video_max_pixels=25_165_824,
    source="https://huggingface.co/Qwen/Qwen3-VL-30B-A3B-Instruct/blob/main/video_preprocessor_config.json")
# scb10x/typhoon-ocr-7b is a Qwen2.5-VL-7B fine-tune: its vision_config and preprocessor_config.json
# (min_pixels 3136, max_pixels 12845056) are Qwen2.5-VL-7B-Instruct's.
QWEN25_VL_7B = VisionEncoder(
    family="qwen2_5_vl", depth=32, hidden_size=1280, intermediate_size=3420, num_heads=16, patch_size=14,
    temporal_patch_size=2, spatial_merge_size=2, out_hidden_size=3584, gated_mlp=True,
    image_max_pixels=12_845_056,
    source="https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/preprocessor_config.json")


def _logged(case: dict[str, Any]) -> tuple[int, int, str]:
    logged = case["logged"]
    return int(logged["encoder_budget"]), int(logged["encoder_items"]), str(logged["encoder_modality"])


ENCODER_CASES = [case for case in load_cases() if "encoder_budget" in case["logged"]]


def test_the_corpus_logs_encoder_lines_to_check() -> None:
    assert len(ENCODER_CASES) >= 6
    assert {str(case["vllm_version"])[:4] for case in ENCODER_CASES} >= {"0.10", "0.11", "0.12", "0.19"}


@pytest.mark.parametrize("case", ENCODER_CASES, ids=lambda case: case["id"])
def test_every_logged_encoder_line_is_derived(case: dict[str, Any]) -> None:
    """Budget, item count and modality from the model's config, the flags and the release (its
    batch defaults for the GPU where the log states none), as the estimate profiles them."""
    encoder = estimate_available_memory(case_inputs(case)).encoder
    assert encoder is not None
    batch = encoder.batch
    assert (batch.encoder_budget, batch.items, batch.item.modality) == _logged(case)


@pytest.mark.parametrize(("version", "max_model_len", "tokens", "expected"), [
    # vllm#38459 (v0.17.1, Qwen3-VL): "budget of 16384 tokens, and profiled with 1 image items"
    ("0.17.1", 32768, 8192, (16384, 1, "image")),
    # the v0.11/v0.12 starts: one video counted with timestamps, 12,288 x 12.5
    ("0.11.2", 65536, 2048, (153600, 1, "video")),
    # from v0.13 the video's soft tokens (12,288) no longer beat the 16,384-token image
    ("0.13.0", 65536, 8192, (16384, 1, "image")),
    ("0.15.1", 65536, 8192, (16384, 1, "image")),
    # a budget of twice the image's tokens holds two images
    ("0.22.1", 200000, 32768, (32768, 2, "image")),
])
def test_qwen3_vl_profiles_what_each_release_logs(version: str, max_model_len: int, tokens: int,
                                                   expected: tuple[int, int, str]) -> None:
    batch = dummy_batch(resolve_release(version)[0], QWEN3_VL_30B, max_model_len=max_model_len,
                        max_num_batched_tokens=tokens, max_num_seqs=8)
    assert batch is not None
    assert (batch.encoder_budget, batch.items, batch.item.modality) == expected


def test_qwen2_5_vl_ties_go_to_video_from_v0_17() -> None:
    """github.com/WaroonRagwongsiri/SuperAi-SS6-Level2-Hack4 (vllm.log, v0.22.0, typhoon-ocr-7b,
    max_model_len 8192): "budget of 16384 tokens, and profiled with 1 video items" - one frame,
    padded to two, is the 16,384 tokens of the largest image; v0.17 breaks the tie by name."""
    for version, modality in (("0.22.1", "video"), ("0.16.0", "image"), ("0.12.0", "image")):
        batch = dummy_batch(resolve_release(version)[0], QWEN25_VL_7B, max_model_len=8192,
                            max_num_batched_tokens=8192, max_num_seqs=10)
        assert batch is not None
        assert (batch.encoder_budget, batch.items, batch.item.modality) == (16384, 1, modality)
        assert batch.item.patches == 65536  # a 3584 x 3584 image (or two such frames) in 14-pixel patches


def test_a_long_context_makes_qwen2_5_vl_profile_a_video_of_many_frames() -> None:
    """Frames of the largest image fit max_model_len, at most 14 (qwen2_vl.py _MAX_FRAMES_PER_VIDEO):
    32,768 tokens hold four frames, two temporal patches of 16,384 tokens."""
    video = largest_items(resolve_release("0.19.1")[0], QWEN25_VL_7B, 32768)["video"]
    assert (video.embeds, video.frames, video.patches) == (32768, 2, 131072)
    capped = largest_items(resolve_release("0.19.1")[0], QWEN25_VL_7B, 262144)["video"]
    assert capped.frames == 7  # 14 frames


def test_limits_leave_modalities_out() -> None:
    release = resolve_release("0.19.1")[0]
    kwargs: dict[str, Any] = {"max_model_len": 32768, "max_num_batched_tokens": 8192, "max_num_seqs": 8}
    only_image = dummy_batch(release, QWEN25_VL_7B, limits={"video": 0}, **kwargs)
    assert only_image is not None and only_image.item.modality == "image"
    assert dummy_batch(release, QWEN25_VL_7B, limits={"image": 0, "video": 0}, **kwargs) is None
    one_per_prompt = dummy_batch(release, MODELS["gemma-3-27b-it"].vision or QWEN25_VL_7B, limits={"image": 1},
                                 max_model_len=4096, max_num_batched_tokens=8192, max_num_seqs=2)
    assert one_per_prompt is not None and one_per_prompt.items == 2  # two sequences of one image each


def test_gemma_3_counts_its_image_markers_up_to_v0_12() -> None:
    """A Gemma 3 image is 256 embeddings; its placeholder adds a begin and end marker and two
    line breaks (260 tokens), which the budget counts up to v0.12 (profiling.py
    get_mm_max_contiguous_tokens) and not from v0.13 (embeddings only)."""
    vision = MODELS["gemma-3-27b-it"].vision
    assert vision is not None
    old = dummy_batch(resolve_release("0.12.0")[0], vision, max_model_len=131072, max_num_batched_tokens=8192,
                      max_num_seqs=256)
    new = dummy_batch(resolve_release("0.13.0")[0], vision, max_model_len=131072, max_num_batched_tokens=8192,
                      max_num_seqs=256)
    assert old is not None and new is not None
    assert (old.items, new.items) == (8192 // 260, 8192 // 256)


@pytest.mark.parametrize(("limits", "max_model_len", "items"), [
    (None, 200000, 2),           # the default limit, 999 a prompt: 200,000 // 16,384 = 12 images fit one prompt
    ({"image": 1}, 200000, 1),   # --limit-mm-per-prompt '{"image": 1}': one a prompt, one request
    (None, 20000, 1),            # one 16,384-token image fills a 20,000-token prompt
])
def test_one_request_profiles_as_many_images_as_its_prompt_may_hold(
        limits: dict[str, int] | None, max_model_len: int, items: int) -> None:
    """v0.22.1 multimodal/encoder_budget.py _get_max_items with max_num_seqs 1: min(32,768 // 16,384,
    1 x max(1, min(limit, max_model_len // 16,384))) - the limit defaults to 999 (config/multimodal.py)."""
    batch = dummy_batch(resolve_release("0.22.1")[0], QWEN3_VL_30B, max_model_len=max_model_len,
                        max_num_batched_tokens=32768, max_num_seqs=1, limits={"video": 0, **(limits or {})})
    assert batch is not None
    assert (batch.encoder_budget, batch.items, batch.item.embeds) == (32768, items, 16384)


def test_without_a_limit_a_prompt_holds_up_to_vllm_s_default_of_999_items() -> None:
    """config/multimodal.py (v0.19.1): a modality --limit-mm-per-prompt leaves out counts 999 a prompt.
    Gemma 3's image is 256 embeddings (from v0.13): a 512,000-token prompt would fit 2,000 and a
    384,000-token budget 1,500, so one sequence profiles min(1,500, 1 x min(999, 2,000)) = 999."""
    vision = MODELS["gemma-3-27b-it"].vision
    assert vision is not None
    batch = dummy_batch(resolve_release("0.19.1")[0], vision, max_model_len=512_000,
                        max_num_batched_tokens=384_000, max_num_seqs=1)
    assert batch is not None and batch.items == 999
    limited = dummy_batch(resolve_release("0.19.1")[0], vision, max_model_len=512_000,
                          max_num_batched_tokens=384_000, max_num_seqs=1, limits={"image": 1000})
    assert limited is not None and limited.items == 1000


@pytest.mark.parametrize(("temporal_patch_size", "frames"), [(2, 3), (1, 3)])
def test_the_qwen2_vl_dummy_video_is_as_long_as_max_model_len_allows(temporal_patch_size: int, frames: int) -> None:
    """qwen2_vl.py `_get_max_video_frames` (v0.19.1): add frames of the largest image (3,584 x
    3,584: 128 x 128 = 16,384 tokens a temporal patch) while the video's tokens fit
    max_model_len. At 3 x 16,384 + 100 that is 6 frames in 3 temporal patches of 2, or 3 frames
    of 1 - whose 4th frame would need 65,536 tokens."""
    vision = QWEN25_VL_7B.model_copy(update={"temporal_patch_size": temporal_patch_size})
    video = largest_items(resolve_release("0.19.1")[0], vision, 3 * 16384 + 100)["video"]
    assert (video.frames, video.embeds) == (frames, frames * 16384)
