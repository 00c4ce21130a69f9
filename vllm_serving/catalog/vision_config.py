"""A checkpoint's vision encoder from its config.json `vision_config` and the processor configs
beside it (`preprocessor_config.json`, `video_preprocessor_config.json`, or both nested in
`processor_config.json`), for the encoders vLLM's profiling is modelled for (catalog/vision.py).

Families are told apart as vLLM's model registry does, by the architecture: Qwen2-VL,
Qwen2.5-VL, Qwen3-VL and Qwen3.5/3.6 (whose vision_config is Qwen3-VL's), Gemma 3 (SigLIP) and
LLaVA-1.5 (CLIP). Anything else - or a Qwen checkpoint without its processor limits - gives
None: the encoder is then not counted, and the plan says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vllm_serving.bounded_read import FileRefused, read_regular_file
from vllm_serving.catalog.hf_config_fields import encoder_width
from vllm_serving.catalog.vision import VisionEncoder, VisionFamily

_QWEN_FAMILIES: tuple[tuple[str, VisionFamily], ...] = (
    ("Qwen2VL", "qwen2_vl"), ("Qwen2_5_VL", "qwen2_5_vl"), ("Qwen3VL", "qwen3_vl"), ("Qwen3_5", "qwen3_vl"),
)
PROCESSOR_FILES = ("preprocessor_config.json", "video_preprocessor_config.json", "processor_config.json")
MAX_PROCESSOR_BYTES = 2**20


def _longest_edge(processor: Mapping[str, Any] | None) -> int | None:
    """A processor's pixel limit: `size.longest_edge` (transformers 4.5x on) or `max_pixels`."""
    if not processor:
        return None
    size = processor.get("size")
    edge = size.get("longest_edge") if isinstance(size, Mapping) else None
    value = edge or processor.get("max_pixels")
    # a JSON true is a bool, which Python also calls an int: it is no pixel count
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _qwen(family: VisionFamily, vision: Mapping[str, Any], hidden: int, image: Mapping[str, Any] | None,
          video: Mapping[str, Any] | None, source: str) -> VisionEncoder:
    image_max = _longest_edge(image)
    video_max = _longest_edge(video) if family == "qwen3_vl" else None
    # a missing limit: VisionEncoder refuses it (vision.py `_complete`), and vision_encoder gives None
    width = encoder_width(vision)
    inner = vision.get("intermediate_size") or int(vision.get("mlp_ratio", 4) * width)
    return VisionEncoder(
        family=family, depth=int(vision["depth"]), hidden_size=width, intermediate_size=int(inner),
        num_heads=int(vision["num_heads"]), patch_size=int(vision.get("patch_size") or 14),
        temporal_patch_size=int(vision.get("temporal_patch_size") or 2),
        spatial_merge_size=int(vision.get("spatial_merge_size") or 2),
        # vLLM builds the patch embedding from vision_config.in_channels, transformers' key with its
        # default 3 (qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py, v0.19.1); Qwen2/2.5-VL's files also
        # carry an `in_chans` that neither reads
        in_channels=int(vision.get("in_channels") or 3),
        out_hidden_size=int(vision.get("out_hidden_size") or hidden),
        deepstack_layers=len(vision.get("deepstack_visual_indexes") or ()), gated_mlp=family == "qwen2_5_vl",
        image_max_pixels=image_max, video_max_pixels=video_max, source=source)


def _fixed(top: Mapping[str, Any], vision: Mapping[str, Any], hidden: int, source: str) -> VisionEncoder | None:
    """Gemma 3 (SigLIP, `mm_tokens_per_image` pooled tokens between a begin and an end marker and
    two line breaks) and LLaVA-1.5 (CLIP run to `vision_feature_layer`, one token per patch)."""
    side = int(vision["image_size"]) // int(vision["patch_size"])
    layers = int(vision["num_hidden_layers"])
    common = {"hidden_size": int(vision["hidden_size"]), "intermediate_size": int(vision["intermediate_size"]),
              "num_heads": int(vision["num_attention_heads"]), "patch_size": int(vision["patch_size"]),
              "out_hidden_size": hidden, "image_pixels": int(vision["image_size"]) ** 2, "source": source}
    if str(top.get("model_type")) == "gemma3":
        tokens = int(top.get("mm_tokens_per_image") or 256)
        return VisionEncoder(family="fixed_resolution", depth=layers, image_tokens=tokens,
                             image_placeholder_tokens=tokens + 4, image_patches=side * side, **common)
    if str(top.get("model_type")) == "llava":
        feature_layer = int(top.get("vision_feature_layer", -2))
        depth = layers + feature_layer + 1 if feature_layer < 0 else feature_layer
        return VisionEncoder(family="fixed_resolution", depth=depth, image_tokens=side * side,
                             image_patches=side * side + 1, **common)
    return None


def vision_encoder(config: Mapping[str, Any], processors: Mapping[str, Mapping[str, Any]],
                   source: str) -> VisionEncoder | None:
    """The encoder a config.json and its processor configs describe, if its family is modelled.
    `processors` maps "image" / "video" to the processor configs (absent: unknown)."""
    vision = config.get("vision_config")
    if not isinstance(vision, Mapping):
        return None
    nested = config.get("text_config")
    text: Mapping[str, Any] = nested if isinstance(nested, Mapping) else config
    hidden = int(text.get("hidden_size") or config.get("hidden_size") or 0)
    names = " ".join(str(name) for name in config.get("architectures") or ())
    family = next((fam for prefix, fam in _QWEN_FAMILIES if prefix in names), None)
    try:
        if family is not None:
            return _qwen(family, vision, hidden, processors.get("image"), processors.get("video"), source)
        return _fixed(config, vision, hidden, source)
    except (KeyError, TypeError, ValueError):
        return None


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(read_regular_file(path, MAX_PROCESSOR_BYTES).decode("utf-8"))
    except (FileRefused, OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def processor_configs(folder: Path) -> dict[str, dict[str, Any]]:
    """The image and video processor configs beside a config.json (transformers' file names;
    `processor_config.json` nests them under `image_processor` / `video_processor`)."""
    found: dict[str, dict[str, Any]] = {}
    combined = _read_json(folder / "processor_config.json") or {}
    for modality, name in (("image", "preprocessor_config.json"), ("video", "video_preprocessor_config.json")):
        nested = combined.get(f"{modality}_processor")
        data = _read_json(folder / name) or (nested if isinstance(nested, dict) else None)
        if data is not None:
            found[modality] = data
    if "video" not in found and "image" in found:
        found["video"] = found["image"]  # transformers builds a missing video processor from the image one
    return found
