"""The models we know: the architecture facts the planner and the rules need.

A stack names an entry (`model.name`), gives the same facts inline (`model.architecture`) or
points at the model's `config.json` (`model.configFile`). The entries are data
(`models.json`): each is what `hf_config.parse_hf_config` reads from the published config.json
named in its `source`, plus the few facts a config.json lacks (the weights' size, the first vLLM
release that runs it); tests/catalog holds the config.json copies and checks the two agree.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Literal

import msgspec
from pydantic import Field, model_validator

from vllm_serving.catalog.checkpoint import checkpoint_bytes
from vllm_serving.catalog.checkpoint_config import CatalogFacts as _Facts
from vllm_serving.catalog.checkpoint_config import CheckpointQuantization as CheckpointQuantization
from vllm_serving.catalog.checkpoint_config import QuantScheme as QuantScheme
from vllm_serving.catalog.checkpoint_config import RopeScaling as RopeScaling
from vllm_serving.catalog.names import Lookup, compact, lookup, tokens
from vllm_serving.catalog.vision import VisionEncoder

WeightDtype = Literal["bfloat16", "float16", "float32"]


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


class MultiLatentAttention(_Facts):
    """Multi-head latent attention (DeepSeek-V2/V3): keys and values are rebuilt from one
    compressed latent per token and layer, which is all the KV cache holds."""

    kv_lora_rank: int = Field(ge=1)
    """Width of the compressed KV latent (`kv_lora_rank`)."""
    qk_rope_head_dim: int = Field(ge=1)
    """Rotary part of each query/key head, cached beside the latent (`qk_rope_head_dim`)."""
    qk_nope_head_dim: int = Field(ge=1)
    """Non-rotary part of each query/key head (`qk_nope_head_dim`)."""
    v_head_dim: int = Field(ge=1)
    """Dimension of each value head (`v_head_dim`)."""
    q_lora_rank: int | None = Field(default=None, ge=1)
    """Width of the compressed query (`q_lora_rank`); unset: queries are not compressed."""

    @property
    def cache_dim(self) -> int:
        """Elements cached per token and layer: vLLM's MLA head size (kv_lora_rank +
        qk_rope_head_dim, one "KV head" replicated on every TP rank;
        vllm/transformers_utils/model_arch_config_convertor.py get_head_size, v0.19.1)."""
        return self.kv_lora_rank + self.qk_rope_head_dim


class MixtureOfExperts(_Facts):
    """Routed experts: every expert's weights are loaded, a few run per token."""

    num_experts: int = Field(ge=1)
    """Routed experts per MoE layer (`num_experts`, `n_routed_experts`, `num_local_experts`)."""
    experts_per_token: int = Field(ge=1)
    """Experts each token is routed to (`num_experts_per_tok`)."""
    shared_experts: int = Field(default=0, ge=0)
    """Experts every token also runs (`n_shared_experts`; 1 where a shared expert is sized)."""
    intermediate_size: int | None = Field(default=None, ge=1)
    """One routed expert's MLP width: `moe_intermediate_size`, else (gpt-oss, Mixtral, whose
    experts are the MLP) `intermediate_size`; unset: the planner derives it from the parameter count."""
    shared_intermediate_size: int | None = Field(default=None, ge=1)
    """The shared experts' MLP width (`shared_expert_intermediate_size`, else shared experts x
    the routed width); unset: no shared expert weights beyond `sharedExperts` x the routed width."""
    dense_layers: int = Field(default=0, ge=0)
    """Leading layers with a dense MLP instead of experts (`first_k_dense_replace`, `mlp_only_layers`)."""


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
    """Size of the weights in memory (GiB); absent: counted per tensor from the shapes and the
    quantization's packing (catalog/checkpoint.py)."""
    weights_source: str | None = None
    """Where `weightsGib` comes from (e.g. the safetensors headers beside a configFile)."""
    weights_dtype: WeightDtype = "bfloat16"
    """The checkpoint's `torch_dtype`."""
    quantization: str | None = None
    """Quantization of the checkpoint (`fp8`, `awq`, `gptq`, ...); none for full precision."""
    num_hidden_layers: int = Field(ge=1)
    """All decoder layers, attention and linear attention."""
    hidden_size: int = Field(ge=1)
    """Model width."""
    intermediate_size: int | None = Field(default=None, ge=1)
    """MLP width (config.json `intermediate_size`), for the profiling run's activation peak;
    unset: the planner derives it from the parameter count."""
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
    mla: MultiLatentAttention | None = None
    """Multi-head latent attention dimensions (DeepSeek-V3/R1), if the model uses it."""
    sliding_window: int | None = Field(default=None, ge=1)
    """Tokens a sliding-window layer attends to (`sliding_window`), if some layers are limited."""
    sliding_window_layers: int = Field(default=0, ge=0)
    """Attention layers that attend only within `sliding_window` (part of full_attention_layers)."""
    experts: MixtureOfExperts | None = None
    """Routed experts of a mixture-of-experts model, if any."""
    mtp_layers: int = Field(default=0, ge=0)
    """Multi-token-prediction layers usable as a speculative draft (`method: mtp`)."""
    refuses_float16: bool = False
    """True for architectures vLLM will not run in float16 (gemma2, gemma3, ...)."""
    tie_word_embeddings: bool = False
    """The output head is the input embedding (`tie_word_embeddings`): loaded once."""
    attention_output_gate: bool = False
    """The query projection also gates the attention output (`attn_output_gate`, Qwen3.5/3.6,
    Qwen3-Next): twice the query width."""
    partial_rotary_factor: float = Field(default=1.0, gt=0, le=1)
    """Share of each head that is rotated (`partial_rotary_factor`): the width of vLLM's rotary
    cos/sin cache, which loads with the weights."""
    multimodal_rope: bool = False
    """M-RoPE (`mrope_section` in the rope parameters, Qwen-VL and Qwen3.5/3.6): vLLM's
    MRotaryEmbedding caches four times max_position_embeddings positions (for video)."""
    vision_params_billion: float = Field(default=0.0, ge=0)
    """Parameters of the vision tower and its projector (0: none), loaded unless vLLM runs the
    language model only (`--language-model-only`)."""
    rope_scaling: tuple[RopeScaling, ...] = ()
    """RoPE scalings that stretch the context (one per layer type for nested `rope_parameters`)."""
    quantization_config: CheckpointQuantization | None = None
    """The quantized checkpoint's bits, group size and FP8 block size, where it states them."""
    vision: VisionEncoder | None = None
    """The vision encoder's shape and its processor's limits, where known: vLLM encodes dummy
    images with it before sizing the KV cache (planner/encoder_profile.py)."""
    text_model_type: str | None = None
    """The language model's own `model_type` where config.json nests it under `text_config` and it
    differs (`gemma3_text` in a `gemma3` checkpoint): what vLLM's `hf_text_config` checks read."""
    min_vllm_version: str | None = None
    """First vLLM release that runs this architecture."""

    @model_validator(mode="after")
    def _consistent(self) -> ModelArchitecture:
        """Facts that contradict each other describe no model vLLM could load."""
        linear = self.linear_attention.num_layers if self.linear_attention else 0
        if self.full_attention_layers + linear != self.num_hidden_layers:
            raise ValueError(f"fullAttentionLayers ({self.full_attention_layers}) plus linear-attention layers "
                             f"({linear}) must equal numHiddenLayers ({self.num_hidden_layers})")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(f"numAttentionHeads ({self.num_attention_heads}) must be a multiple of "
                             f"numKeyValueHeads ({self.num_key_value_heads})")
        if self.sliding_window_layers > self.full_attention_layers or (
                self.sliding_window_layers and self.sliding_window is None):
            raise ValueError("slidingWindowLayers needs slidingWindow and at most fullAttentionLayers layers")
        return self

    @property
    def total_weights_gib(self) -> float:
        """The checkpoint as loaded on one GPU: the catalog figure, else per tensor from the
        shapes and the quantization's packing (`checkpoint.checkpoint_bytes`); vision included,
        MTP layers not (they load only as a speculative draft)."""
        if self.weights_gib is not None:
            return self.weights_gib
        return checkpoint_bytes(self).loaded_total() / 2**30

    @property
    def language_model_type(self) -> str:
        return self.text_model_type or self.model_type

    @property
    def is_fp8(self) -> bool:
        return self.quantization in ("fp8", "fp8_e4m3", "compressed-tensors-fp8")



class LoggedLoad(_Facts):
    """A real start-up of the model: what vLLM logged as "Model loading took" on one GPU."""

    tp: int = Field(ge=1)
    gib_per_gpu: float = Field(gt=0)
    vllm: str
    gpu: str
    source: str = Field(pattern=r"^https://")
    language_model_only: bool = False
    """Started with `--language-model-only`: the vision tower was not loaded."""
    note: str | None = None


class CatalogEntry(ModelArchitecture):
    """A catalog model: its facts plus where they come from."""

    source: str = Field(pattern=r"^https://huggingface\.co/.+/config\.json$")
    """The published config.json the facts are read from."""
    notes: str | None = None
    """Where a fact does not come from the config.json (weights' size, vLLM release), and why."""
    logged_loads: tuple[LoggedLoad, ...] = ()
    """Public start-up logs of this model (or a fine-tune of the same shapes): the per-tensor
    weights are checked against them (tests/planner/test_weights_per_gpu.py)."""

    def architecture_facts(self) -> ModelArchitecture:
        """The facts alone, as an inline `model.architecture` would give them."""
        return ModelArchitecture.model_validate(self.model_dump(exclude={"source", "notes", "logged_loads"}))


def _load_catalog() -> dict[str, CatalogEntry]:
    # bytes: json.loads reads them as UTF-8 (RFC 8259) whatever the locale CI or a user runs under
    raw = json.loads((resources.files("vllm_serving.catalog") / "models.json").read_bytes())
    return {name: CatalogEntry.model_validate(facts) for name, facts in raw["models"].items()}


CATALOG: dict[str, CatalogEntry] = _load_catalog()
"""Every catalog entry by name, with its source."""
MODELS: dict[str, ModelArchitecture] = {name: entry.architecture_facts() for name, entry in CATALOG.items()}
"""The catalog's facts by name: what `model.name` resolves to."""


def find_model(name: str) -> ModelArchitecture | None:
    by_lower = {k.lower(): v for k, v in MODELS.items()}
    return by_lower.get(name.lower())


HUGGING_FACE = "https://huggingface.co/"


def hugging_face_id(entry: CatalogEntry) -> str:
    """`Qwen/Qwen3-8B`: the repository of the entry's source config.json."""
    return entry.source.removeprefix(HUGGING_FACE).split("/blob/")[0]


_SPELLINGS = {compact(hugging_face_id(e)): (name, "its Hugging Face id") for name, e in CATALOG.items()}
_WORDS = {name: frozenset(tokens(name)) | frozenset(tokens(hugging_face_id(e))) for name, e in CATALOG.items()}


def lookup_model(typed: str) -> Lookup:
    """The catalog model a typed name means (names.lookup): `Qwen/Qwen3-8B`, its URL and
    `qwen3 8b` are each taken as Qwen3-8B, and said so; another organisation's upload of the same
    name (`someone/Qwen3-8B`) is not taken (it may be another quantisation), only suggested."""
    found = lookup(typed.strip().removeprefix(HUGGING_FACE), list(MODELS), _SPELLINGS, _WORDS)
    return msgspec.structs.replace(found, typed=typed)


def suggest_model(name: str) -> list[str]:
    """Catalog names for a name a stack file misspells: the one it means, else the candidates."""
    found = lookup_model(name)
    return [found.name] if found.name is not None else list(found.candidates)
