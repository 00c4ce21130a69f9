"""A vision-language model's image encoder, as far as vLLM's start-up profiling needs it.

vLLM runs the encoder on dummy images (or a dummy video) of the largest size the processor
accepts before it sizes the KV cache (`profile_run`), so the memory it finds depends on the
encoder's widths (`vision_config` in config.json) and on the processor's pixel limits
(`preprocessor_config.json`, `video_preprocessor_config.json`). `planner/encoder_profile.py`
turns these facts into bytes; docs/memory-accounting.md explains each.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from vllm_serving.catalog.checkpoint_config import CatalogFacts

VisionFamily = Literal["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "fixed_resolution"]
"""How vLLM sizes and runs the encoder:
- `qwen2_vl`, `qwen2_5_vl`, `qwen3_vl` (Qwen3.5/3.6 too): images resized to the processor's
  pixel budget, patches merged 2 x 2 into tokens (model_executor/models/qwen2_vl.py,
  qwen2_5_vl.py, qwen3_vl.py);
- `fixed_resolution`: every image becomes the same number of patches and tokens (CLIP in
  LLaVA, SigLIP in Gemma 3)."""


class VisionEncoder(CatalogFacts):
    """The encoder's shape and the processor limits its profiling depends on."""

    # No use_attribute_docstrings (CatalogFacts' config): it parses this module's source at every
    # start-up (~a twentieth of `plan`'s instructions) for descriptions nothing reads.

    family: VisionFamily
    depth: int = Field(ge=1)
    """Encoder blocks run (`depth`, `num_hidden_layers`; LLaVA runs up to its feature layer)."""
    hidden_size: int = Field(ge=1)
    intermediate_size: int = Field(ge=1)
    """The MLP's width (`intermediate_size`; Qwen2-VL: `mlp_ratio` x `embed_dim`)."""
    num_heads: int = Field(ge=1)
    patch_size: int = Field(ge=1)
    temporal_patch_size: int = Field(default=1, ge=1)
    """Frames folded into one patch (Qwen: 2; an image is its frame twice)."""
    spatial_merge_size: int = Field(default=1, ge=1)
    """Patches merged per side into one language-model token (Qwen: 2)."""
    in_channels: int = Field(default=3, ge=1)
    out_hidden_size: int = Field(ge=1)
    """Width of one token the encoder hands the language model (`out_hidden_size`, else the
    language model's hidden size)."""
    deepstack_layers: int = Field(default=0, ge=0)
    """Qwen3-VL's `deepstack_visual_indexes`: each adds one more `out_hidden_size` per token."""
    gated_mlp: bool = False
    """A SwiGLU MLP (Qwen2.5-VL: gate and up projections, then down)."""
    image_max_pixels: int | None = Field(default=None, ge=1)
    """Qwen: the image processor's `max_pixels` / `size.longest_edge`."""
    video_max_pixels: int | None = Field(default=None, ge=1)
    """Qwen3-VL/3.5: the video processor's `size.longest_edge`, over all frames of a video
    (Qwen2/2.5-VL resize each frame with the image limit)."""
    image_tokens: int | None = Field(default=None, ge=1)
    """fixed_resolution: embeddings one image gives the language model."""
    image_placeholder_tokens: int | None = Field(default=None, ge=1)
    """fixed_resolution: prompt tokens one image takes, breaks and markers included (the budget
    counts these up to v0.12); unset: `image_tokens`."""
    image_patches: int | None = Field(default=None, ge=1)
    """fixed_resolution: the encoder's sequence per image over all its tiles (a CLS token
    included where the encoder has one)."""
    image_pixels: int | None = Field(default=None, ge=1)
    """fixed_resolution: pixels the processor hands the encoder per image, over all tiles."""
    source: str = Field(min_length=1)
    """Where the processor limits come from: the published preprocessor_config.json for a catalog
    entry, the checkpoint folder for a `configFile`."""

    @model_validator(mode="after")
    def _complete(self) -> VisionEncoder:
        """Each family needs its own limits; without them the profiling cannot be sized."""
        if self.family == "fixed_resolution":
            needed = ("image_tokens", "image_patches", "image_pixels")
            missing = [name for name in needed if getattr(self, name) is None]
        else:
            missing = ["image_max_pixels"] if self.image_max_pixels is None else []
            if self.family == "qwen3_vl" and self.video_max_pixels is None:
                missing.append("video_max_pixels")
        if missing:
            raise ValueError(f"a {self.family} encoder needs {', '.join(missing)} (from its processor config)")
        return self

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @property
    def output_width(self) -> int:
        """Elements per token the encoder returns: Qwen3-VL concatenates its deepstack levels."""
        return self.out_hidden_size * (1 + self.deepstack_layers)
