"""The vision encoder a checkpoint folder describes (catalog/vision_config.py): its config.json's
vision_config and the processor configs beside it, as the catalog's entries state them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vllm_serving.catalog.hf_config import load_hf_config
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
