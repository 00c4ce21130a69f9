"""A checkpoint's tensors by kind: what vLLM loads, and how each kind is split across GPUs.

Counted per tensor, not per parameter: embeddings, output head, routers and (in Qwen3.5/3.6 FP8
checkpoints) every Gated DeltaNet tensor stay 16-bit while the projections are quantized; 4-bit
methods pack eight values into an int32 with their scales and zero points
(`weight_packing.json`). The kinds are the ones the planner splits differently across tensor
parallel ranks (vllm_serving/planner/weights_per_gpu.py). Two sources give them:
`checkpoint_bytes` estimates them from the config.json shapes; `checkpoint_headers.py` reads
them from the safetensors headers of a checkpoint on disk.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, Literal, Protocol

import msgspec

TensorKind = Literal[
    "embedding", "lm_head", "attention_qo", "attention_kv", "attention_replicated", "mlp", "experts",
    "shared_expert", "router", "linear_attention_proj", "linear_attention_small", "norm", "vision", "mtp",
]
KINDS: tuple[TensorKind, ...] = (
    "embedding", "lm_head", "attention_qo", "attention_kv", "attention_replicated", "mlp", "experts",
    "shared_expert", "router", "linear_attention_proj", "linear_attention_small", "norm", "vision", "mtp",
)
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


class CheckpointBytes(msgspec.Struct, frozen=True):
    """Bytes of each tensor kind in the checkpoint, as vLLM keeps them after loading."""

    by_kind: dict[TensorKind, float] = msgspec.field(default_factory=dict)
    source: str = ""
    """Where the figures come from: the safetensors headers, or the shapes and packing rules."""

    def get(self, kind: TensorKind) -> float:
        return self.by_kind.get(kind, 0.0)

    def loaded_total(self) -> float:
        """Everything vLLM loads for the served model (MTP layers load only as a draft)."""
        return sum(size for kind, size in self.by_kind.items() if kind != "mtp")


class _Experts(Protocol):
    @property
    def num_experts(self) -> int: ...
    @property
    def shared_experts(self) -> int: ...
    @property
    def intermediate_size(self) -> int | None: ...
    @property
    def shared_intermediate_size(self) -> int | None: ...
    @property
    def dense_layers(self) -> int: ...


class _Linear(Protocol):
    @property
    def num_layers(self) -> int: ...
    @property
    def num_key_heads(self) -> int: ...
    @property
    def num_value_heads(self) -> int: ...
    @property
    def key_head_dim(self) -> int: ...
    @property
    def value_head_dim(self) -> int: ...
    @property
    def conv_kernel(self) -> int: ...


class _Mla(Protocol):
    @property
    def kv_lora_rank(self) -> int: ...
    @property
    def qk_rope_head_dim(self) -> int: ...
    @property
    def qk_nope_head_dim(self) -> int: ...
    @property
    def v_head_dim(self) -> int: ...
    @property
    def q_lora_rank(self) -> int | None: ...


class _Scheme(Protocol):
    @property
    def weights_type(self) -> str: ...
    @property
    def weights_bits(self) -> int: ...


class _Quantization(Protocol):
    @property
    def bits(self) -> int | None: ...
    @property
    def schemes(self) -> tuple[_Scheme, ...]: ...


class ModelFacts(Protocol):
    """The config.json facts the inventory reads (catalog.models.ModelArchitecture has them)."""

    @property
    def model_type(self) -> str: ...
    @property
    def weights_dtype(self) -> str: ...
    @property
    def quantization(self) -> str | None: ...
    @property
    def quantization_config(self) -> _Quantization | None: ...
    @property
    def num_hidden_layers(self) -> int: ...
    @property
    def hidden_size(self) -> int: ...
    @property
    def intermediate_size(self) -> int | None: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def num_attention_heads(self) -> int: ...
    @property
    def num_key_value_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    @property
    def params_billion(self) -> float: ...
    @property
    def full_attention_layers(self) -> int: ...
    @property
    def linear_attention(self) -> _Linear | None: ...
    @property
    def mla(self) -> _Mla | None: ...
    @property
    def experts(self) -> _Experts | None: ...
    @property
    def mtp_layers(self) -> int: ...
    @property
    def tie_word_embeddings(self) -> bool: ...
    @property
    def attention_output_gate(self) -> bool: ...
    @property
    def vision_params_billion(self) -> float: ...


@cache
def packing() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files(__package__).joinpath("weight_packing.json").read_text())
    return data


def method_of(quantization: str | None) -> dict[str, Any] | None:
    """The packing of a quant_method (aliases resolved); None for a 16-bit checkpoint."""
    if quantization is None:
        return None
    table = packing()
    name = table["aliases"].get(quantization.lower(), quantization.lower())
    method: dict[str, Any] | None = table["methods"].get(name)
    return method


def packing_of(model: ModelFacts) -> dict[str, Any] | None:
    """The packing a checkpoint loads with: its method's, or for a method that names no bit width
    (compressed-tensors, bitsandbytes) the one its config groups or load_in_*bit select."""
    if model.quantization is None:
        return None
    table = packing()
    variants: dict[str, str] = table["by_bits"].get(model.quantization.lower(), {})
    config = model.quantization_config
    if variants and config is not None:
        keys = [f"{s.weights_type}{s.weights_bits}" for s in config.schemes] or \
            ([str(config.bits)] if config.bits is not None else [])
        found: list[dict[str, Any]] = [table["methods"][variants[k]] for k in keys if k in variants]
        if found:
            return max(found, key=lambda m: float(m["bytes_per_element"]))
    return method_of(model.quantization)


def _attention(model: ModelFacts) -> dict[TensorKind, int]:
    """One full-attention layer's projection elements by kind."""
    hidden, heads = model.hidden_size, model.num_attention_heads
    mla = model.mla
    if mla is not None:
        qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        # q_a_proj and kv_a_proj_with_mqa are ReplicatedLinear in vLLM (models/deepseek_v2.py)
        latent = hidden * (mla.kv_lora_rank + mla.qk_rope_head_dim) + hidden * (mla.q_lora_rank or 0)
        q = mla.q_lora_rank * heads * qk if mla.q_lora_rank else hidden * heads * qk
        kv_b = mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
        return {"attention_replicated": latent, "attention_qo": q + kv_b + heads * mla.v_head_dim * hidden}
    q_out = heads * model.head_dim * (2 if model.attention_output_gate else 1)
    return {"attention_qo": hidden * q_out + heads * model.head_dim * hidden,
            "attention_kv": 2 * hidden * model.num_key_value_heads * model.head_dim}


def _linear_attention(model: ModelFacts) -> dict[TensorKind, int]:
    """One Gated DeltaNet layer: in_proj_qkvz and out_proj, then in_proj_ba, conv1d, A_log, dt_bias, norm."""
    lin, hidden = model.linear_attention, model.hidden_size
    if lin is None:
        return {}
    conv_dim = 2 * lin.num_key_heads * lin.key_head_dim + lin.num_value_heads * lin.value_head_dim
    value = lin.num_value_heads * lin.value_head_dim
    return {"linear_attention_proj": hidden * (conv_dim + value) + value * hidden,
            "linear_attention_small": hidden * 2 * lin.num_value_heads + conv_dim * lin.conv_kernel
            + 2 * lin.num_value_heads + lin.value_head_dim}


MAX_MLP_RATIO = 6
"""The widest MLP a derived width may take, in multiples of hidden (published models stay below)."""


def _mlp_elements_per_layer(model: ModelFacts) -> float:
    """What one decoder layer holds beyond its attention projections (q, o, k, v), from the parameter
    count with the embeddings taken as untied: the MLP the derived widths split."""
    hidden = model.hidden_size
    per_layer = (model.params_billion * 1e9 - 2 * model.vocab_size * hidden) / model.num_hidden_layers
    return per_layer - hidden * model.head_dim * (2 * model.num_attention_heads + 2 * model.num_key_value_heads)


def derived_intermediate_size(model: ModelFacts) -> int:
    """The MLP width from the parameter count when the architecture lacks it: a layer's MLP over
    gate + up + down (3 x hidden), between hidden and MAX_MLP_RATIO x hidden."""
    hidden = model.hidden_size
    mlp = round(_mlp_elements_per_layer(model) / (3 * hidden))
    return min(max(mlp, hidden), MAX_MLP_RATIO * hidden)


def derived_expert_intermediate_size(model: ModelFacts) -> int:
    """One routed expert's MLP width from the parameter count, for an architecture that does not
    give `experts.intermediateSize`: a layer's MLP over gate + up + down (3 x hidden) of every
    routed and shared expert; 0 for a dense model. The checkpoint counts the experts with it, and
    the planner's MoE workspace too."""
    experts = model.experts
    if experts is None:
        return 0
    width = _mlp_elements_per_layer(model) / (3 * model.hidden_size * (experts.num_experts + experts.shared_experts))
    return max(1, round(width))


def _mlp(model: ModelFacts, layers: int, dense_layers: int | None = None) -> dict[TensorKind, int]:
    """The MLPs of `layers` decoder layers: dense, or routed experts, shared experts and a router;
    the first `dense_layers` (the model's own, unless given) dense.
    A dense model without `intermediate_size` (an architecture described inline) gets the width
    its parameter count implies, so its weights are not counted without MLPs."""
    hidden, experts = model.hidden_size, model.experts
    dense_width = model.intermediate_size or (0 if experts is not None else derived_intermediate_size(model))
    if experts is None:
        return {"mlp": layers * 3 * hidden * dense_width}
    # an inline architecture may give neither width: the experts still hold most of the parameters
    width = experts.intermediate_size or dense_width or derived_expert_intermediate_size(model)
    shared = experts.shared_intermediate_size or experts.shared_experts * width
    dense = min(experts.dense_layers if dense_layers is None else dense_layers, layers)
    moe = layers - dense
    return {"mlp": dense * 3 * hidden * dense_width, "experts": moe * experts.num_experts * 3 * hidden * width,
            "shared_expert": moe * 3 * hidden * shared,
            "router": moe * hidden * (experts.num_experts + (1 if shared else 0))}


def element_counts(model: ModelFacts) -> dict[TensorKind, int]:
    """Elements of each kind: embeddings, head (unless tied), attention, Gated DeltaNet, MLPs,
    norms, the vision tower and the MTP layers."""
    hidden, layers = model.hidden_size, model.num_hidden_layers
    counts: dict[TensorKind, int] = {kind: 0 for kind in KINDS}
    counts["embedding"] = model.vocab_size * hidden
    counts["lm_head"] = 0 if model.tie_word_embeddings else model.vocab_size * hidden
    for kind, size in _attention(model).items():
        counts[kind] += model.full_attention_layers * size
    linear_layers = model.linear_attention.num_layers if model.linear_attention else 0
    for kind, size in _linear_attention(model).items():
        counts[kind] += linear_layers * size
    for kind, size in _mlp(model, layers).items():
        counts[kind] += size
    counts["norm"] = (2 * layers + 1) * hidden
    counts["vision"] = round(model.vision_params_billion * 1e9)
    if model.mtp_layers:
        # an MTP layer (qwen3_5_mtp.py, qwen3_next_mtp.py, deepseek_mtp.py, v0.19.1): one
        # full-attention decoder layer numbered past the model's, so past first_k_dense_replace (a
        # MoE layer where the model has experts); the fc (eh_proj) joining embedding and hidden
        # state; five norms of hidden (the layer's two, the embedding's and the hidden state's
        # before the fc, the last; DeepSeek's enorm, hnorm, shared_head.norm). The embedding and
        # head it reads are the served model's (EagleProposer shares identical ones).
        layer = sum(_attention(model).values()) + sum(_mlp(model, 1, dense_layers=0).values())
        counts["mtp"] = model.mtp_layers * (layer + 2 * hidden * hidden + 5 * hidden)
    return counts


def bytes_per_element(model: ModelFacts, kind: TensorKind) -> float:
    """A `kind` element as stored: the method's packed bytes if it quantizes the kind, else the
    checkpoint dtype."""
    plain = float(DTYPE_BYTES.get(model.weights_dtype, 2))
    method = packing_of(model)
    if method is None or kind not in method["quantized"]:
        return plain
    kept = packing()["kept_16bit_by_model_type"].get(model.model_type, ())
    if kind in kept and method is packing()["methods"]["fp8"]:
        return plain
    return float(method["bytes_per_element"])


def checkpoint_bytes(model: ModelFacts) -> CheckpointBytes:
    """The checkpoint by kind, estimated from config.json shapes and the quantization's packing."""
    counts = element_counts(model)
    sizes: dict[TensorKind, float] = {kind: n * bytes_per_element(model, kind) for kind, n in counts.items() if n}
    method = model.quantization or "16-bit"
    return CheckpointBytes(sizes, f"per tensor from config.json shapes, {method} packing (weight_packing.json)")
