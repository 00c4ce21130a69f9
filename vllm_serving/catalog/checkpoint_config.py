"""What a checkpoint's config.json says beyond its shapes: how its RoPE stretches the context and
how its weights are quantized, read as vLLM reads them (catalog/hf_config_fields.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from vllm_serving.catalog.fixable_errors import no_boolean_for_a_number


class CatalogFacts(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
    )

    @model_validator(mode="before")
    @classmethod
    def _no_boolean_for_a_number(cls, data: Any) -> Any:
        return no_boolean_for_a_number(cls, data)


class RopeScaling(CatalogFacts):
    """A RoPE scaling that changes the longest context vLLM derives (config.json `rope_scaling`,
    or `rope_parameters` in newer transformers; `type` read as `rope_type`)."""

    rope_type: str = Field(min_length=1)
    """`yarn`, `linear`, `dynamic`, `llama3`, `longrope` ..."""
    factor: float | None = Field(default=None, gt=0)
    """How much the trained context is stretched."""
    original_max_position_embeddings: int | None = Field(default=None, ge=1)
    """The context the model was trained for before scaling (what YaRN multiplies)."""


class QuantScheme(CatalogFacts):
    """One compressed-tensors config group: how its weights (and activations) are quantized
    (`config_groups.*.weights` / `input_activations`: `type`, `num_bits`, `group_size`)."""

    weights_type: Literal["int", "float"]
    weights_bits: int = Field(ge=1)
    activations_type: Literal["int", "float"] | None = None
    """None: weight-only (no `input_activations`)."""
    activations_bits: int | None = Field(default=None, ge=1)
    group_size: int | None = None


class CheckpointQuantization(CatalogFacts):
    """What a quantized checkpoint's `quantization_config` says beyond its method."""

    bits: int | None = Field(default=None, ge=1)
    """Weight bits (`bits`, `w_bit`)."""
    group_size: int | None = None
    """Weights sharing one scale (`group_size`, `q_group_size`); -1 for per-channel."""
    zero_point: bool | None = None
    """AWQ-style zero points (`zero_point`)."""
    symmetric: bool | None = None
    """GPTQ's symmetric quantization (`sym`)."""
    desc_act: bool | None = None
    """GPTQ's activation-order reordering (`desc_act`)."""
    weight_block_size: tuple[int, int] | None = None
    """FP8 block quantization's [block_n, block_k] (`weight_block_size`)."""
    schemes: tuple[QuantScheme, ...] = ()
    """A compressed-tensors checkpoint's config groups."""
