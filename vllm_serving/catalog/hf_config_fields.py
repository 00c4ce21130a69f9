"""Fields of a Hugging Face `config.json` beyond the model's shape: its RoPE scalings, the quantized
checkpoint's parameters and the vision tower's size, read as vLLM reads them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vllm_serving.catalog.checkpoint_config import CheckpointQuantization, QuantScheme, RopeScaling

# A vision MLP with a silu activation is gated (3 matrices: Qwen2.5-VL's, qwen2_5_vl.py
# Qwen2_5_VisionMLP gate_up_proj + down_proj, v0.19.1); the others run 2 (fc1, fc2: qwen2_vl.py, qwen3_vl.py,
# siglip.py, clip.py). A vision_config without hidden_act has its config class's default: silu for
# Qwen2_5_VLVisionConfig (transformers' configuration_qwen2_5_vl.py), not silu for the others.
_VISION_ACT_DEFAULTS = {"qwen2_5_vl": "silu"}


def encoder_width(vision: Mapping[str, Any]) -> int:
    """The vision encoder's own width: Qwen2-VL names it embed_dim and the width it hands the
    language model hidden_size (qwen2_vl.py: embed_dim = vision_config.embed_dim); the other
    encoders (Qwen2.5-VL on, SigLIP, CLIP) name it hidden_size."""
    return int(vision.get("embed_dim") or vision.get("hidden_size") or 0)


def vision_params(top: Mapping[str, Any], text_hidden: int) -> float:
    """Parameters (billions) of a vision tower from `vision_config`: its blocks (qkv and output
    projections, a gated or plain MLP, norms), patch and position embeddings, and the projector
    into the language model (Qwen's patch merger, or one linear layer); 0 without one."""
    vision = top.get("vision_config")
    if not isinstance(vision, Mapping) or not (vision.get("depth") or vision.get("num_hidden_layers")):
        return 0.0
    depth = int(vision.get("depth") or vision["num_hidden_layers"])
    hidden = encoder_width(vision)
    inner = int(vision.get("intermediate_size") or 4 * hidden)
    act = vision.get("hidden_act") or _VISION_ACT_DEFAULTS.get(str(top.get("model_type")))
    mats = 3 if str(act).startswith("silu") else 2
    block = 4 * hidden * hidden + mats * hidden * inner + 4 * hidden + 2 * inner
    patch = int(vision.get("patch_size") or 14)
    embed = int(vision.get("in_channels") or 3) * int(vision.get("temporal_patch_size") or 1) * patch * patch * hidden
    positions = int(vision.get("num_position_embeddings") or (int(vision.get("image_size") or 0) // patch) ** 2)
    merge = int(vision.get("spatial_merge_size") or 1)
    out = int(vision.get("out_hidden_size") or text_hidden)
    projector = (hidden * merge * merge) ** 2 + hidden * merge * merge * out if merge > 1 else hidden * out
    projector *= 1 + len(vision.get("deepstack_visual_indexes") or [])
    return (depth * block + embed + positions * hidden + projector) / 1e9


def mrope(text: Mapping[str, Any]) -> bool:
    rope = text.get("rope_parameters") or text.get("rope_scaling") or {}
    return isinstance(rope, Mapping) and "mrope_section" in rope


def rotary_factor(text: Mapping[str, Any]) -> float:
    rope = text.get("rope_parameters") or text.get("rope_scaling") or {}
    nested = rope.get("partial_rotary_factor") if isinstance(rope, Mapping) else None
    return float(text.get("partial_rotary_factor") or nested or 1.0)


def rope_scalings(text: Mapping[str, Any]) -> tuple[RopeScaling, ...]:
    """The RoPE entries that can stretch the context: `rope_scaling` (or `rope_parameters`,
    possibly one per layer type) with a factor or an original length, read as vLLM's
    `patch_rope_parameters_dict` reads them (`type` -> `rope_type`, `su` -> `longrope`)."""
    raw = text.get("rope_scaling") or text.get("rope_parameters")
    if not isinstance(raw, Mapping):
        return ()
    entries = [v for v in raw.values() if isinstance(v, Mapping)] or [raw]
    found = []
    for entry in entries:
        kind = str(entry.get("rope_type") or entry.get("type") or "default")
        factor, original = entry.get("factor"), entry.get("original_max_position_embeddings")
        if factor is None and original is None:
            continue
        found.append(RopeScaling(rope_type={"su": "longrope", "mrope": "default"}.get(kind, kind),
                                 factor=float(factor) if factor is not None else None,
                                 original_max_position_embeddings=int(original) if original is not None else None))
    return tuple(found)


def checkpoint_quantization(config: Mapping[str, Any]) -> CheckpointQuantization | None:
    """bits, group size, zero points, symmetry, activation order and FP8 blocks, under the keys
    vLLM's configs read them (`AWQConfig.from_config`: w_bit/bits, q_group_size/group_size;
    `GPTQMarlinConfig`: sym, desc_act; `Fp8Config`: weight_block_size)."""
    if not isinstance(config, Mapping):
        return None
    # bitsandbytes states its width as load_in_4bit / load_in_8bit (BitsAndBytesConfig.from_config)
    bnb = 4 if config.get("load_in_4bit") else 8 if config.get("load_in_8bit") else None
    bits = config.get("bits", config.get("w_bit", bnb))
    group = config.get("group_size", config.get("q_group_size"))
    block = config.get("weight_block_size")
    facts = CheckpointQuantization(
        bits=int(bits) if isinstance(bits, int) else None, group_size=int(group) if isinstance(group, int) else None,
        zero_point=bool(config["zero_point"]) if isinstance(config.get("zero_point"), bool) else None,
        symmetric=bool(config["sym"]) if isinstance(config.get("sym"), bool) else None,
        desc_act=bool(config["desc_act"]) if isinstance(config.get("desc_act"), bool) else None,
        weight_block_size=(int(block[0]), int(block[1])) if isinstance(block, list) and len(block) == 2 else None,
        schemes=_schemes(config.get("config_groups")) if config.get("quant_method") == "compressed-tensors" else ())
    return facts if facts != CheckpointQuantization() else None


def _schemes(groups: object) -> tuple[QuantScheme, ...]:
    """compressed-tensors `config_groups`: each group's weight and input-activation type and bits
    (what `CompressedTensorsConfig._get_scheme_from_parts` picks a scheme by)."""
    if not isinstance(groups, Mapping):
        return ()
    found = []
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, Mapping) else None
        if not isinstance(weights, Mapping) or weights.get("type") not in ("int", "float") \
                or not isinstance(weights.get("num_bits"), int):
            continue
        acts = group.get("input_activations")
        acts = acts if isinstance(acts, Mapping) and acts.get("type") in ("int", "float") else None
        found.append(QuantScheme(
            weights_type=weights["type"], weights_bits=weights["num_bits"],
            activations_type=acts["type"] if acts else None,
            activations_bits=acts.get("num_bits") if acts and isinstance(acts.get("num_bits"), int) else None,
            group_size=weights.get("group_size") if isinstance(weights.get("group_size"), int) else None))
    return tuple(found)
