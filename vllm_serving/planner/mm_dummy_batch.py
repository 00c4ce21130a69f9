"""What a vLLM release feeds a vision-language model's encoder before it sizes the KV cache.

`GPUModelRunner.profile_run` (v1/worker/gpu_model_runner.py; the v2 runner's
`EncoderRunner.profile_encoder_cache`, v1/worker/gpu/mm/encoder_runner.py) encodes a batch of
identical dummy items of one modality, sized by `MultiModalBudget` (v1/worker/utils.py up to
v0.15, multimodal/encoder_budget.py from v0.16):

- each modality's largest item in tokens (`get_mm_max_tokens_per_item`, or the dummy
  inputs' placeholders), modalities whose `--limit-mm-per-prompt` is 0 left out;
- the modality with the most tokens (ties: the first listed, image, up to v0.16; from v0.17
  `max(..., key=(tokens, name))` picks video);
- the budget `max(max_num_batched_tokens, tokens)` (v1/core/encoder_cache_manager.py
  `compute_mm_encoder_budget`; the scheduler sets both budgets to max_num_batched_tokens in
  every release read, config/scheduler.py), logged as "Encoder cache will be initialized with a
  budget of N tokens, and profiled with K <modality> items";
- K = max(1, min(budget // tokens, max_num_seqs x max(1, min(limit, max_model_len // tokens))))
  (`get_max_items`; the per-modality limit defaults to 999, config/multimodal.py).

The item sizes follow each model's processing info (model_executor/models/qwen2_vl.py,
qwen3_vl.py; the fixed-size encoders' counts are catalog facts). Release switches are data
(memory_accounting.json `mm_*` / `qwen_*` keys).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Literal

import msgspec

from vllm_serving.catalog.vision import VisionEncoder
from vllm_serving.planner.release_accounting import ReleaseAccounting

Modality = Literal["image", "video"]
DEFAULT_LIMIT = 999
"""Items of a modality a prompt may hold unless `--limit-mm-per-prompt` says (config/multimodal.py)."""
QWEN3_MAX_FRAMES = 24_576
"""qwen3_vl.py `_MAX_FRAMES_PER_VIDEO` (v0.11-v0.14)."""
QWEN3_TIMESTAMP_TOKENS = 12.5
"""v0.11-v0.12 qwen3_vl.py get_max_video_tokens: each video token counted with its
"<t seconds>" timestamp and vision markers (12.5 tokens on average)."""
# vllm_serving never imports vLLM: the huge side qwen2_vl.py feeds _get_vision_info up to v0.12.
_HUGE_SIDE = 9_999_999


class DummyItem(msgspec.Struct, frozen=True):
    """One dummy image or video as vLLM profiles it."""

    modality: Modality
    budget_tokens: int
    """Tokens the budget counts for it (its placeholder, or timestamps for Qwen3-VL v0.11-v0.12)."""
    embeds: int
    """Rows the encoder returns for it (language-model tokens it fills)."""
    patches: int
    """The encoder's sequence for it."""
    frames: int
    """Temporal slices its attention runs over separately (Qwen: grid_t; 1 for an image)."""
    pixel_elements: int
    """Elements of its pixel values (cast to the model's dtype by the processor,
    multimodal/processing/context.py `_postprocess_output`)."""


class DummyBatch(msgspec.Struct, frozen=True):
    item: DummyItem
    items: int
    encoder_budget: int
    """The "budget of N tokens" vLLM logs."""


def _unit(vision: VisionEncoder) -> int:
    return vision.patch_size * vision.spatial_merge_size


def _patch_elements(vision: VisionEncoder) -> int:
    return vision.in_channels * vision.temporal_patch_size * vision.patch_size ** 2


def _factor_pair(tokens: int) -> tuple[int, int]:
    """qwen2_vl.py get_image_size_with_most_features (v0.13 on): the most tokens whose closest
    factor pair has an aspect ratio within 200."""
    for seq_len in range(tokens, 0, -1):
        short = next(d for d in range(math.isqrt(seq_len), 0, -1) if seq_len % d == 0)
        if seq_len // short / short <= 200:
            return short, seq_len // short
    return 1, 1


def _max_image_grid(rule: str, vision: VisionEncoder, max_pixels: int) -> tuple[int, int]:
    """Merged-token rows and columns of the largest image: up to v0.12 a huge square resized
    by transformers' smart_resize; from v0.13 a factor pair of max_pixels // unit**2
    (memory_accounting.json `qwen_image_size`)."""
    unit = _unit(vision)
    if rule == "factor_pair":
        return _factor_pair(max_pixels // unit ** 2)
    beta = math.sqrt(_HUGE_SIDE * _HUGE_SIDE / max_pixels)
    side = max(unit, math.floor(_HUGE_SIDE / beta / unit) * unit) // unit
    return side, side


def _qwen_item(vision: VisionEncoder, modality: Modality, grid_t: int, rows: int, cols: int,
               budget_tokens: int | None = None) -> DummyItem:
    merge = vision.spatial_merge_size ** 2
    embeds = grid_t * rows * cols
    patches = embeds * merge
    return DummyItem(modality, budget_tokens or embeds, embeds, patches, grid_t, patches * _patch_elements(vision))


def _qwen2_video(release: ReleaseAccounting, vision: VisionEncoder, max_model_len: int) -> DummyItem:
    """qwen2_vl.py `_get_max_video_frames` / `get_num_frames_with_most_features`: frames of the
    largest image while the video's tokens fit max_model_len (at least one, at most
    `_MAX_FRAMES_PER_VIDEO`), padded to whole temporal patches."""
    assert vision.image_max_pixels is not None
    rows, cols = _max_image_grid(release.text("qwen_image_size"), vision, vision.image_max_pixels)
    step = vision.temporal_patch_size
    per_slice = rows * cols
    frames = 1
    while math.ceil((frames + 1) / step) * per_slice <= max_model_len:
        frames += 1
    frames = max(1, min(frames, int(release.raw["qwen2_max_video_frames"])))
    return _qwen_item(vision, "video", max(1, math.ceil(frames / step)), rows, cols)


def _video_grid(vision: VisionEncoder, frames: int, height: int, width: int) -> tuple[int, int, int]:
    """transformers' qwen3_vl video smart_resize (all frames within the video processor's
    longest_edge), then vLLM's grid: (grid_t, merged rows, merged cols)."""
    assert vision.video_max_pixels is not None
    unit, step = _unit(vision), vision.temporal_patch_size
    h_bar, w_bar = round(height / unit) * unit, round(width / unit) * unit
    if math.ceil(frames / step) * step * h_bar * w_bar > vision.video_max_pixels:
        beta = math.sqrt(frames * height * width / vision.video_max_pixels)
        h_bar = max(unit, math.floor(height / beta / unit) * unit)
        w_bar = max(unit, math.floor(width / beta / unit) * unit)
    return max(math.ceil(frames / step), 1), h_bar // unit, w_bar // unit


@cache
def _qwen3_video(rule: str, image_rule: str, vision: VisionEncoder, max_model_len: int) -> DummyItem:
    """qwen3_vl.py: up to v0.14, frames of the largest image from two upwards while their
    tokens fit max_model_len (at most `_MAX_FRAMES_PER_VIDEO`), all frames within the video
    pixel limit - counted with timestamps (x12.5) in v0.11-v0.12; from v0.15 the budget counts
    two frames at the video limit (`get_max_video_tokens`), the size taken for the dummy video
    too (its frames shrink to stay within the same limit)."""
    assert vision.image_max_pixels is not None and vision.video_max_pixels is not None
    unit = _unit(vision)
    if rule == "two_frames":
        rows, cols = _max_image_grid(image_rule, vision, vision.video_max_pixels // vision.temporal_patch_size)
        return _qwen_item(vision, "video", 1, rows, cols)
    rows, cols = _max_image_grid(image_rule, vision, vision.image_max_pixels)
    height, width = rows * unit, cols * unit

    def tokens(frames: int) -> int:
        grid_t, grid_h, grid_w = _video_grid(vision, frames, height, width)
        return grid_t * grid_h * grid_w

    frames = 2
    while frames < QWEN3_MAX_FRAMES and tokens(frames + 1) <= max_model_len:
        frames += 1
    grid_t, grid_h, grid_w = _video_grid(vision, frames, height, width)
    budget = int(tokens(frames) * QWEN3_TIMESTAMP_TOKENS) if rule == "timestamps" else None
    return _qwen_item(vision, "video", grid_t, grid_h, grid_w, budget)


def _fixed_item(release: ReleaseAccounting, vision: VisionEncoder) -> DummyItem:
    assert vision.image_tokens and vision.image_patches and vision.image_pixels
    placeholder = vision.image_placeholder_tokens or vision.image_tokens
    counted = placeholder if release.raw["mm_tokens_per_item"] == "placeholder" else vision.image_tokens
    return DummyItem("image", counted, vision.image_tokens, vision.image_patches, 1,
                     vision.in_channels * vision.image_pixels)


def largest_items(release: ReleaseAccounting, vision: VisionEncoder, max_model_len: int) -> dict[Modality, DummyItem]:
    """Each modality's largest item, image first (the order models list them)."""
    if vision.family == "fixed_resolution":
        return {"image": _fixed_item(release, vision)}
    assert vision.image_max_pixels is not None
    image_rule = release.text("qwen_image_size")
    items: dict[Modality, DummyItem] = {
        "image": _qwen_item(vision, "image", 1, *_max_image_grid(image_rule, vision, vision.image_max_pixels))}
    if vision.family == "qwen3_vl":
        items["video"] = _qwen3_video(release.text("qwen3_video_tokens"), image_rule, vision, max_model_len)
    else:
        items["video"] = _qwen2_video(release, vision, max_model_len)
    return items


def dummy_batch(release: ReleaseAccounting, vision: VisionEncoder, *, max_model_len: int,
                max_num_batched_tokens: int, max_num_seqs: int,
                limits: Mapping[str, int] | None = None) -> DummyBatch | None:
    """The batch the profiling run encodes; None when every modality's limit is 0
    (`--language-model-only`, `--limit-mm-per-prompt` zeros)."""
    limits = limits or {}
    allowed = {modality: item for modality, item in largest_items(release, vision, max_model_len).items()
               if limits.get(modality, DEFAULT_LIMIT) > 0}
    if not allowed:
        return None
    if release.raw["mm_modality_tie"] == "name":
        modality = max(allowed, key=lambda name: (allowed[name].budget_tokens, name))
    else:
        modality = max(allowed, key=lambda name: allowed[name].budget_tokens)
    item = allowed[modality]
    budget = max(max_num_batched_tokens, item.budget_tokens)
    per_prompt = max(1, min(limits.get(modality, DEFAULT_LIMIT), max_model_len // item.budget_tokens))
    items = max(1, min(budget // item.budget_tokens, max_num_seqs * per_prompt))
    return DummyBatch(item, items, budget)
