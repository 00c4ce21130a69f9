"""The multimodal flags in `engine.extraArgs` that change what vLLM's profiling run encodes, read as
vLLM's argparse reads them (the last occurrence wins; `--flag=value`, `--flag value` and the
dotted `--limit-mm-per-prompt.video 0` alike; config/multimodal.py MultiModalConfig)."""

from __future__ import annotations

import pytest

from vllm_serving.catalog.models import MODELS
from vllm_serving.planner.memory_budget import MultimodalFlags, multimodal_flags, profiled_vision

TAG = "v0.19.1"


@pytest.mark.parametrize("kwargs", ['{"max_pixels": 0}', '{"max_pixels": -1}', '{"max_pixels": "802816"}',
                                    '{"size": {"longest_edge": 0}}', '{"size": 802816}', "[802816]", "not json"])
def test_a_processor_limit_that_is_no_positive_pixel_count_keeps_the_model_limit(kwargs: str) -> None:
    """Only a positive whole number of pixels sizes an image (transformers' smart_resize divides
    by max_pixels); anything else leaves the processor's own limit, the catalog's."""
    assert multimodal_flags(TAG, ["--mm-processor-kwargs", kwargs]).image_max_pixels is None
    vision = MODELS["Qwen3.6-27B"].vision
    assert vision is not None
    assert profiled_vision(MODELS["Qwen3.6-27B"], False, None) == vision
    assert vision.image_max_pixels == 16_777_216  # preprocessor_config.json longest_edge


@pytest.mark.parametrize(("args", "pixels"), [
    (["--mm-processor-kwargs", '{"max_pixels": 1}'], 1),
    (["--mm-processor-kwargs", '{"size": {"longest_edge": 802816, "shortest_edge": 3136}}'], 802816),
    (["--mm-processor-kwargs={\"max_pixels\": 1003520}"], 1003520),
    # argparse keeps the last occurrence
    (["--mm-processor-kwargs", '{"max_pixels": 1003520}', "--mm-processor-kwargs", '{"max_pixels": 401408}'],
     401408),
])
def test_the_processor_limit_is_the_last_positive_pixel_count(args: list[str], pixels: int) -> None:
    assert multimodal_flags(TAG, args).image_max_pixels == pixels


def test_the_processor_limit_replaces_the_image_limit_of_the_profiled_encoder() -> None:
    model = MODELS["Qwen3.6-27B"]
    vision = profiled_vision(model, False, 1003520)
    assert vision is not None and vision.image_max_pixels == 1003520
    assert vision.video_max_pixels == 25_165_824  # the video processor's limit is its own
    assert profiled_vision(model, True, 1003520) is None  # --language-model-only: no encoder


@pytest.mark.parametrize(("args", "limits"), [
    (["--limit-mm-per-prompt.video", "0"], {"video": 0}),
    (["--limit-mm-per-prompt.image=3"], {"image": 3}),
    (["--limit-mm-per-prompt", '{"image": {"count": 1, "width": 512}, "video": 2}'], {"image": 1, "video": 2}),
    (["--limit-mm-per-prompt", '{"image": "4"}'], {"image": 4}),
    (["--limit-mm-per-prompt", '{"image": -1, "video": "many"}'], {}),
])
def test_the_per_prompt_limits_are_read_per_modality(args: list[str], limits: dict[str, int]) -> None:
    assert dict(multimodal_flags(TAG, args).limits) == limits


def test_the_encoder_mode_and_the_profiling_switch_follow_the_last_occurrence() -> None:
    assert multimodal_flags(TAG, ["--mm-encoder-tp-mode", "data", "--mm-encoder-tp-mode", "weights"]) == (
        MultimodalFlags())
    assert multimodal_flags(TAG, ["--mm-encoder-tp-mode=weights", "--mm-encoder-tp-mode=data"]).encoder_data_parallel
    assert not multimodal_flags(TAG, ["--skip-mm-profiling", "--no-skip-mm-profiling"]).skip_profiling
    assert multimodal_flags(TAG, ["--no-skip-mm-profiling", "--skip-mm-profiling"]).skip_profiling
    assert multimodal_flags(TAG, []) == MultimodalFlags()
