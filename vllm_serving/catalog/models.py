"""The models we know, as data: the architecture facts the planner and the rules need.

A stack may name an entry (`model.name`) or give the same facts inline (`model.architecture`).
Figures for Qwen3.5/3.6-27B come from their Hugging Face `config.json` and vLLM's recipes.
"""

from __future__ import annotations

import difflib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

WeightDtype = Literal["bfloat16", "float16", "float32"]


class _Facts(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        use_attribute_docstrings=True,
    )


class LinearAttention(_Facts):
    """Gated DeltaNet (linear attention) layers: a fixed-size state per sequence, no per-token KV."""

    num_layers: int = Field(ge=1)
    """How many layers use linear attention."""
    num_key_heads: int = Field(ge=1)
    """Key heads of the linear-attention layers."""
    num_value_heads: int = Field(ge=1)
    """Value heads of the linear-attention layers."""
    key_head_dim: int = Field(ge=1)
    """Dimension of each key head."""
    value_head_dim: int = Field(ge=1)
    """Dimension of each value head."""
    conv_kernel: int = Field(default=4, ge=1)
    """Width of the short convolution (`linear_conv_kernel_dim`); its last kernel - 1 inputs,
    plus one row per speculative token, are kept per sequence."""
    state_dtype_bytes: int | None = Field(default=None, ge=1)
    """Bytes per element of the recurrent state: config.json's `mamba_ssm_dtype` (float32 -> 4)
    where the architecture reads it (Qwen3.5/3.6); unset: the compute dtype, as vLLM does."""


class ModelArchitecture(_Facts):
    """What the planner and the rules need to know about a model."""

    architecture: str = Field(min_length=1)
    """Hugging Face architecture class, e.g. `Qwen3_5ForConditionalGeneration`."""
    model_type: str = Field(min_length=1)
    """Hugging Face `model_type`, e.g. `qwen3_5`."""
    family: str = Field(min_length=1)
    """Parser family: the reasoning and tool-call parsers that fit, e.g. `qwen3`."""
    params_billion: float = Field(gt=0)
    """Parameter count in billions."""
    weights_gib: float | None = Field(default=None, gt=0)
    """Size of the weights in memory (GiB); derived from parameters and dtype when absent."""
    weights_dtype: WeightDtype = "bfloat16"
    """The checkpoint's `torch_dtype`."""
    quantization: str | None = None
    """Quantization of the checkpoint (`fp8`, `awq`, `gptq`, ...); none for full precision."""
    num_hidden_layers: int = Field(ge=1)
    """All decoder layers, attention and linear attention."""
    hidden_size: int = Field(ge=1)
    """Model width."""
    vocab_size: int = Field(ge=1)
    """Vocabulary size."""
    max_position_embeddings: int = Field(ge=1)
    """Longest context the model was trained for."""
    num_attention_heads: int = Field(ge=1)
    """Query heads of the full-attention layers."""
    num_key_value_heads: int = Field(ge=1)
    """KV heads of the full-attention layers (GQA)."""
    head_dim: int = Field(ge=1)
    """Dimension of each attention head."""
    full_attention_layers: int = Field(ge=1)
    """Layers with a per-token KV cache."""
    linear_attention: LinearAttention | None = None
    """Linear-attention layers of a hybrid model, if any."""
    mtp_layers: int = Field(default=0, ge=0)
    """Multi-token-prediction layers usable as a speculative draft (`method: mtp`)."""
    refuses_float16: bool = False
    """True for architectures vLLM will not run in float16 (gemma2, gemma3, ...)."""
    min_vllm_version: str | None = None
    """First vLLM release that runs this architecture."""

    @property
    def total_weights_gib(self) -> float:
        """Weights in memory: the catalog figure, else parameters x bytes per parameter."""
        if self.weights_gib is not None:
            return self.weights_gib
        return self.params_billion * 1e9 * self.bytes_per_param / 2**30

    @property
    def bytes_per_param(self) -> float:
        if self.quantization in QUANTIZED_BYTES:
            return QUANTIZED_BYTES[self.quantization]
        return {"bfloat16": 2.0, "float16": 2.0, "float32": 4.0}[self.weights_dtype]

    @property
    def is_fp8(self) -> bool:
        return self.quantization in ("fp8", "fp8_e4m3", "compressed-tensors-fp8")


# Bytes per parameter of quantized checkpoints (ignores the few layers kept in 16 bits).
QUANTIZED_BYTES: dict[str, float] = {
    "fp8": 1.0, "fp8_e4m3": 1.0, "int8": 1.0, "awq": 0.5, "gptq": 0.5, "gptq-int4": 0.5,
}


_QWEN3_5_27B = dict(
    architecture="Qwen3_5ForConditionalGeneration",
    model_type="qwen3_5",
    family="qwen3",
    params_billion=27.0,
    num_hidden_layers=64,
    hidden_size=5120,
    vocab_size=248320,
    max_position_embeddings=262144,
    num_attention_heads=24,
    num_key_value_heads=4,
    head_dim=256,
    full_attention_layers=16,  # full_attention_interval 4: every 4th of 64 layers
    # config.json text_config: linear_num_key_heads, linear_num_value_heads,
    # linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim, mamba_ssm_dtype float32
    # (tests/fixtures/hf/qwen3.5-27b.config.json); Qwen3.6-27B is taken to share it (same architecture).
    linear_attention=LinearAttention(
        num_layers=48,
        num_key_heads=16,
        num_value_heads=48,
        key_head_dim=128,
        value_head_dim=128,
        conv_kernel=4,
        state_dtype_bytes=4,
    ),
    mtp_layers=1,  # mtp_num_hidden_layers
    min_vllm_version="0.17.0",
)

# Sizes per vLLM's recipes: ~65 GB BF16, ~33 GB FP8 (decimal GB, converted to GiB).
_BF16_GIB = 65e9 / 2**30
_FP8_GIB = 33e9 / 2**30

MODELS: dict[str, ModelArchitecture] = {
    "Qwen3.5-27B": ModelArchitecture(**_QWEN3_5_27B, weights_gib=_BF16_GIB),
    "Qwen3.5-27B-FP8": ModelArchitecture(
        **_QWEN3_5_27B, weights_gib=_FP8_GIB, quantization="fp8"
    ),
    "Qwen3.6-27B": ModelArchitecture(**_QWEN3_5_27B, weights_gib=_BF16_GIB),
    "Qwen3.6-27B-FP8": ModelArchitecture(
        **_QWEN3_5_27B, weights_gib=_FP8_GIB, quantization="fp8"
    ),
}


def find_model(name: str) -> ModelArchitecture | None:
    by_lower = {k.lower(): v for k, v in MODELS.items()}
    return by_lower.get(name.lower())


def suggest_model(name: str) -> list[str]:
    return difflib.get_close_matches(name, list(MODELS), n=3, cutoff=0.4)
