"""The vision encoder a checkpoint folder describes (catalog/vision_config.py): its config.json's
vision_config and the processor configs beside it, as the catalog's entries state them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vllm_serving.catalog.hf_config import load_hf_config, parse_hf_config
from vllm_serving.catalog.models import MODELS
from vllm_serving.catalog.vision_config import vision_encoder

CONFIGS = Path(__file__).parent / "configs"
# Qwen3.5/3.6's published processor limits (preprocessor_config.json and
# video_preprocessor_config.json of the Qwen/Qwen3.5-* and Qwen/Qwen3.6-* repositories).
QWEN35_IMAGE = {"size": {"longest_edge": 16777216, "shortest_edge": 65536}, "patch_size": 16,
                "temporal_patch_size": 2, "merge_size": 2}
QWEN35_VIDEO = {"size": {"longest_edge": 25165824, "shortest_edge": 4096}, "patch_size": 16,
                "temporal_patch_size": 2, "merge_size": 2}
FIELDS = ("family", "depth", "hidden_size", "intermediate_size", "num_heads", "patch_size", "temporal_patch_size",
          "spatial_merge_size", "out_hidden_size", "deepstack_layers", "image_max_pixels", "video_max_pixels")


@pytest.mark.parametrize(("name", "config"), [
    ("Qwen3.5-35B-A3B", "Qwen--Qwen3.5-35B-A3B.config.json"),
    ("Qwen3.5-122B-A10B", "Qwen--Qwen3.5-122B-A10B.config.json"),
    ("Qwen3.5-397B-A17B", "Qwen--Qwen3.5-397B-A17B.config.json"),
    ("Qwen3.6-35B-A3B", "Qwen--Qwen3.6-35B-A3B.config.json"),
    ("Qwen3.6-27B", "nvidia--Qwen3.6-27B-NVFP4.config.json"),
])
def test_a_checkpoint_folder_gives_the_catalogs_encoder(tmp_path: Path, name: str, config: str) -> None:
    shutil.copy(CONFIGS / config, tmp_path / "config.json")
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(QWEN35_IMAGE))
    (tmp_path / "video_preprocessor_config.json").write_text(json.dumps(QWEN35_VIDEO))
    found, entry = load_hf_config(tmp_path / "config.json").vision, MODELS[name].vision
    assert found is not None and entry is not None
    assert {f: getattr(found, f) for f in FIELDS} == {f: getattr(entry, f) for f in FIELDS}


def test_the_combined_processor_config_is_read_too(tmp_path: Path) -> None:
    shutil.copy(CONFIGS / "Qwen--Qwen3.6-35B-A3B.config.json", tmp_path / "config.json")
    (tmp_path / "processor_config.json").write_text(
        json.dumps({"image_processor": QWEN35_IMAGE, "video_processor": QWEN35_VIDEO}))
    vision = load_hf_config(tmp_path / "config.json").vision
    assert vision is not None and (vision.image_max_pixels, vision.video_max_pixels) == (16777216, 25165824)


def test_without_its_processor_limits_a_qwen_encoder_is_not_sized(tmp_path: Path) -> None:
    """The pixel budget decides the dummy image: without it the encoder is left uncounted, not guessed."""
    shutil.copy(CONFIGS / "Qwen--Qwen3.6-35B-A3B.config.json", tmp_path / "config.json")
    assert load_hf_config(tmp_path / "config.json").vision is None


def test_a_text_model_has_no_encoder(tmp_path: Path) -> None:
    shutil.copy(CONFIGS / "Qwen--Qwen3-8B.config.json", tmp_path / "config.json")
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(QWEN35_IMAGE))
    assert load_hf_config(tmp_path / "config.json").vision is None


def test_gemma_3_and_llava_give_fixed_size_images() -> None:
    """gemma-3-27b-it: SigLIP at 896 px in 14 px patches, pooled to mm_tokens_per_image;
    llava-1.5-7b: CLIP at 336 px run to vision_feature_layer -2 (23 of 24 layers), CLS included."""
    gemma = vision_encoder({
        "architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "mm_tokens_per_image": 256,
        "text_config": {"hidden_size": 5376},
        "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304,
                          "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14}}, {}, "gemma")
    entry = MODELS["gemma-3-27b-it"].vision
    assert gemma is not None and entry is not None
    assert gemma.model_dump(exclude={"source"}) == entry.model_dump(exclude={"source"})
    llava = vision_encoder({
        "architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "vision_feature_layer": -2,
        "text_config": {"hidden_size": 4096},
        "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
                          "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14}}, {}, "llava")
    assert llava is not None
    assert (llava.depth, llava.image_tokens, llava.image_patches, llava.image_pixels) == (23, 576, 577, 112896)


def test_catalog_encoders_cite_their_published_processor_config() -> None:
    encoders = {name: model.vision for name, model in MODELS.items() if model.vision is not None}
    assert {"Qwen3.5-27B", "Qwen3.6-27B", "gemma-3-27b-it"} <= set(encoders)
    assert all(vision.source.startswith("https://huggingface.co/") and vision.source.endswith("_config.json")
               for vision in encoders.values())
    # every catalog model with a vision tower has its encoder, but Mistral Small 3.1 (Pixtral: not modelled)
    towers = {name for name, model in MODELS.items() if model.vision_params_billion}
    assert towers - set(encoders) == {"Mistral-Small-3.1-24B-Instruct-2503"}


QWEN2_VL_7B = Path(__file__).parents[1] / "fixtures" / "hf" / "qwen2-vl-7b-instruct.config.json"
# Qwen/Qwen2-VL-7B-Instruct's preprocessor_config.json: min_pixels 3136, max_pixels 12845056
QWEN2_VL_IMAGE = {"min_pixels": 3136, "max_pixels": 12845056, "patch_size": 14, "temporal_patch_size": 2,
                  "merge_size": 2}


def test_qwen2_vl_encoder_is_embed_dim_wide_and_hands_over_hidden_size(tmp_path: Path) -> None:
    """Qwen2-VL's vision_config names the encoder's width `embed_dim` (1280) and the width it hands
    the language model `hidden_size` (3584): vLLM builds Qwen2VisionTransformer with
    embed_dim = vision_config.embed_dim, mlp_ratio x embed_dim wide MLPs and a merger out to
    vision_config.hidden_size (model_executor/models/qwen2_vl.py)."""
    shutil.copy(QWEN2_VL_7B, tmp_path / "config.json")
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(QWEN2_VL_IMAGE))
    model = load_hf_config(tmp_path / "config.json")
    vision = model.vision
    assert vision is not None
    assert (vision.family, vision.depth, vision.hidden_size, vision.intermediate_size, vision.num_heads) == (
        "qwen2_vl", 32, 1280, 4 * 1280, 16)
    assert (vision.out_hidden_size, vision.image_max_pixels, vision.gated_mlp) == (3584, 12845056, False)
    assert (vision.patch_size, vision.temporal_patch_size, vision.spatial_merge_size, vision.in_channels) == (
        14, 2, 2, 3)
    # the tower by hand: 32 blocks of qkv + proj (4 x 1280^2), fc1 + fc2 (2 x 1280 x 5120), two
    # LayerNorms and the biases (4 x 1280 + 2 x 5120); the 3 x 2 x 14 x 14 patch embedding; the
    # merger's 5120 x 5120 and 5120 x 3584: 675.7 M, the "675M" ViT of the Qwen2-VL report
    by_hand = 32 * (4 * 1280**2 + 2 * 1280 * 5120 + 4 * 1280 + 2 * 5120) + 3 * 2 * 14 * 14 * 1280 \
        + 5120**2 + 5120 * 3584
    assert model.vision_params_billion == pytest.approx(by_hand / 1e9, abs=0.001)
    assert by_hand / 1e9 == pytest.approx(0.675, abs=0.001)


def _qwen2_vl(vision: dict[str, object]) -> dict[str, object]:
    config: dict[str, object] = json.loads(QWEN2_VL_7B.read_text(encoding="utf-8"))
    config["vision_config"] = vision
    return config


# Qwen/Qwen2.5-VL-7B-Instruct's vision_config as published: a SwiGLU MLP (hidden_act silu)
# 3420 wide, 1280-wide blocks handing 3584 over
QWEN25_VL_7B_VISION = {"depth": 32, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420,
                       "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14,
                       "spatial_merge_size": 2, "spatial_patch_size": 14, "window_size": 112,
                       "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2, "temporal_patch_size": 2}


def test_qwen2_5_vl_runs_a_gated_mlp() -> None:
    """qwen2_5_vl.py Qwen2_5_VisionMLP: gate_up_proj (two 3420-wide halves) then down_proj."""
    config = _qwen2_vl(QWEN25_VL_7B_VISION) | {"architectures": ["Qwen2_5_VLForConditionalGeneration"],
                                              "model_type": "qwen2_5_vl"}
    vision = vision_encoder(config, {"image": QWEN2_VL_IMAGE}, "qwen2.5-vl")
    assert vision is not None
    assert (vision.family, vision.gated_mlp, vision.hidden_size, vision.intermediate_size) == (
        "qwen2_5_vl", True, 1280, 3420)
    assert vision.output_width == 3584
    # the tower by hand, three MLP matrices a block: 676.4 M
    by_hand = 32 * (4 * 1280**2 + 3 * 1280 * 3420 + 4 * 1280 + 2 * 3420) + 3 * 2 * 14 * 14 * 1280 \
        + 5120**2 + 5120 * 3584
    assert parse_hf_config(config, "config.json").vision_params_billion == pytest.approx(by_hand / 1e9, abs=0.001)


def test_a_qwen2_5_vl_vision_config_without_its_activation_still_counts_the_gated_mlp() -> None:
    """Qwen2_5_VLVisionConfig's hidden_act defaults to silu (transformers), and vLLM builds
    Qwen2_5_VisionMLP's gate_up_proj whatever it is (qwen2_5_vl.py): three matrices a block, as
    above; Qwen2-VL's default, quick_gelu, runs fc1 and fc2 (qwen2_vl.py VisionMlp): two."""
    unstated = {k: v for k, v in QWEN25_VL_7B_VISION.items() if k != "hidden_act"}
    config = _qwen2_vl(unstated) | {"architectures": ["Qwen2_5_VLForConditionalGeneration"],
                                    "model_type": "qwen2_5_vl"}
    three = 32 * (4 * 1280**2 + 3 * 1280 * 3420 + 4 * 1280 + 2 * 3420) + 3 * 2 * 14 * 14 * 1280 \
        + 5120**2 + 5120 * 3584
    assert parse_hf_config(config, "config.json").vision_params_billion == pytest.approx(three / 1e9, abs=0.001)
    two = three - 32 * 1280 * 3420  # one 1280 x 3420 matrix less a block: 140 M fewer
    qwen2 = _qwen2_vl(unstated) | {"model_type": "qwen2_vl"}
    assert parse_hf_config(qwen2, "config.json").vision_params_billion == pytest.approx(two / 1e9, abs=0.001)


def test_qwen2_vl_mlp_ratio_is_read_and_defaults_to_four() -> None:
    """Qwen2VLVisionConfig's mlp_ratio defaults to 4 (transformers); a config that states another
    ratio gets MLPs of that ratio x embed_dim."""
    published = json.loads(QWEN2_VL_7B.read_text(encoding="utf-8"))["vision_config"]
    without = {k: v for k, v in published.items() if k != "mlp_ratio"}
    default = vision_encoder(_qwen2_vl(without), {"image": QWEN2_VL_IMAGE}, "qwen2-vl")
    other = vision_encoder(_qwen2_vl(published | {"mlp_ratio": 2.5}), {"image": QWEN2_VL_IMAGE}, "qwen2-vl")
    assert default is not None and other is not None
    assert (default.intermediate_size, other.intermediate_size) == (5120, 3200)


def test_the_merge_and_patch_sizes_are_the_configs() -> None:
    """transformers' tiny Qwen2.5-VL test config merges no patches (spatial_merge_size 1): one
    token per patch; the published ones merge 2 x 2."""
    tiny = QWEN25_VL_7B_VISION | {"spatial_merge_size": 1, "patch_size": 16, "temporal_patch_size": 1}
    config = _qwen2_vl(tiny) | {"architectures": ["Qwen2_5_VLForConditionalGeneration"]}
    vision = vision_encoder(config, {"image": QWEN2_VL_IMAGE}, "tiny")
    assert vision is not None
    assert (vision.spatial_merge_size, vision.patch_size, vision.temporal_patch_size) == (1, 16, 1)


def test_qwen3_vl_deepstack_levels_widen_what_the_encoder_hands_over(tmp_path: Path) -> None:
    """Qwen3-VL's deepstack_visual_indexes [8, 16, 24]: three more out_hidden_size-wide outputs a
    token (qwen3_vl.py concatenates them), and three more mergers in the tower."""
    config = json.loads((CONFIGS / "Qwen--Qwen3.6-35B-A3B.config.json").read_text(encoding="utf-8"))
    plain = parse_hf_config(config, "config.json")
    config["vision_config"]["deepstack_visual_indexes"] = [8, 16, 24]
    stacked = vision_encoder(config, {"image": QWEN35_IMAGE, "video": QWEN35_VIDEO}, "qwen3-vl")
    assert stacked is not None
    out = config["vision_config"]["out_hidden_size"]
    assert (stacked.deepstack_layers, stacked.output_width) == (3, 4 * out)
    merged = 4 * config["vision_config"]["hidden_size"]
    merger = merged * merged + merged * out
    assert parse_hf_config(config, "config.json").vision_params_billion == pytest.approx(
        plain.vision_params_billion + 3 * merger / 1e9, abs=0.001)


def test_gemma3_image_tokens_default_to_the_config_classs_256() -> None:
    """Gemma3Config's mm_tokens_per_image defaults to 256: a config.json that leaves it out still
    gives 256 tokens an image (and 260 prompt tokens with the markers and line breaks)."""
    config = json.loads((Path(__file__).parents[1] / "fixtures" / "hf" / "gemma-3-4b-it.config.json").read_text())
    del config["mm_tokens_per_image"]
    vision = vision_encoder(config, {}, "gemma")
    assert vision is not None and (vision.image_tokens, vision.image_placeholder_tokens) == (256, 260)
    assert vision.out_hidden_size == 2560  # the language model's width, from text_config


def test_llava_runs_clip_up_to_its_feature_layer() -> None:
    """llava.py: a negative vision_feature_layer counts from the end (-1: all 24 CLIP layers run),
    a positive one is the number of layers run."""
    llava = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
             "text_config": {"hidden_size": 4096},
             "vision_config": {"hidden_size": 1024, "image_size": 336, "intermediate_size": 4096,
                               "num_attention_heads": 16, "num_hidden_layers": 24, "patch_size": 14}}
    depths = [vision_encoder(llava | {"vision_feature_layer": layer}, {}, "llava") for layer in (-1, 12)]
    assert [v.depth if v else None for v in depths] == [24, 12]
    # left out, transformers' LlavaConfig default applies: vision_feature_layer=-2, 23 layers
    unset = vision_encoder(llava, {}, "llava")
    assert unset is not None and unset.depth == 23


def test_the_patch_embeddings_channels_are_read_under_transformers_key() -> None:
    """vLLM builds the patch embedding with vision_config.in_channels (qwen2_vl.py, qwen2_5_vl.py,
    qwen3_vl.py, v0.19.1), which transformers' Qwen2VLVisionConfig defaults to 3; the `in_chans`
    Qwen2/2.5-VL's files also carry is read by neither."""
    processors = {"image": QWEN2_VL_IMAGE}
    stated = vision_encoder(_qwen2_vl(QWEN25_VL_7B_VISION | {"in_channels": 4}), processors, "t")
    assert stated is not None and stated.in_channels == 4
    legacy = vision_encoder(_qwen2_vl(QWEN25_VL_7B_VISION | {"in_chans": 1}), processors, "t")
    assert legacy is not None and legacy.in_channels == 3


def test_an_image_processor_alone_sizes_the_video_too(tmp_path: Path) -> None:
    """transformers builds a missing video processor from the image processor's settings: a Qwen3.5
    folder with preprocessor_config.json alone gets its limit for video as well."""
    shutil.copy(CONFIGS / "Qwen--Qwen3.6-35B-A3B.config.json", tmp_path / "config.json")
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(QWEN35_IMAGE))
    vision = load_hf_config(tmp_path / "config.json").vision
    assert vision is not None and (vision.image_max_pixels, vision.video_max_pixels) == (16777216, 16777216)


def test_a_qwen3_encoder_whose_video_processor_has_no_limit_is_not_sized(tmp_path: Path) -> None:
    """Qwen3-VL's profile runs a video too (vision.py): without the video processor's pixel limit
    the encoder is left uncounted, as without the image one."""
    shutil.copy(CONFIGS / "Qwen--Qwen3.6-35B-A3B.config.json", tmp_path / "config.json")
    (tmp_path / "preprocessor_config.json").write_text(json.dumps(QWEN35_IMAGE))
    (tmp_path / "video_preprocessor_config.json").write_text(json.dumps({"size": {"shortest_edge": 4096}}))
    assert load_hf_config(tmp_path / "config.json").vision is None


@pytest.mark.parametrize("limit", [0, -1, 12845056.0, "12845056", True])
def test_a_pixel_limit_that_is_not_a_positive_whole_number_leaves_the_encoder_unsized(limit: object) -> None:
    """transformers' processors take max_pixels / size.longest_edge as a whole number of pixels: a
    zero, negative, fractional, quoted or boolean one is no limit, so the encoder is not counted
    (as without a processor config), not sized from a guess."""
    config = _qwen2_vl(QWEN25_VL_7B_VISION) | {"architectures": ["Qwen2_5_VLForConditionalGeneration"]}
    for processor in ({"max_pixels": limit}, {"size": {"longest_edge": limit}}):
        assert vision_encoder(config, {"image": processor}, "qwen2.5-vl") is None


def test_the_width_handed_to_the_language_model_is_the_vision_configs_out_hidden_size() -> None:
    """qwen2_5_vl.py (v0.19.1) builds the patch merger to vision_config.out_hidden_size: the language model's
    hidden_size only stands in when the file states none."""
    config = _qwen2_vl(QWEN25_VL_7B_VISION | {"out_hidden_size": 2048}) | {
        "architectures": ["Qwen2_5_VLForConditionalGeneration"]}
    vision = vision_encoder(config, {"image": QWEN2_VL_IMAGE}, "qwen2.5-vl")
    assert vision is not None and vision.out_hidden_size == 2048
    unstated = {k: v for k, v in QWEN25_VL_7B_VISION.items() if k != "out_hidden_size"}
    config = _qwen2_vl(unstated) | {"architectures": ["Qwen2_5_VLForConditionalGeneration"]}
    vision = vision_encoder(config, {"image": QWEN2_VL_IMAGE}, "qwen2.5-vl")
    assert vision is not None and vision.out_hidden_size == 3584  # Qwen2-VL-7B's text hidden_size
