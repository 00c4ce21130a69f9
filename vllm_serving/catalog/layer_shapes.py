"""What a text config's layer shapes say: multi-head latent attention, the experts, and the
parameter count estimated from them (config.json carries none)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vllm_serving.catalog.models import MixtureOfExperts, MultiLatentAttention


def latent_attention(text: Mapping[str, Any]) -> MultiLatentAttention | None:
    if "kv_lora_rank" not in text:
        return None
    return MultiLatentAttention(
        kv_lora_rank=int(text["kv_lora_rank"]), qk_rope_head_dim=int(text["qk_rope_head_dim"]),
        qk_nope_head_dim=int(text["qk_nope_head_dim"]), v_head_dim=int(text["v_head_dim"]),
        q_lora_rank=int(text["q_lora_rank"]) if text.get("q_lora_rank") else None)


def experts(text: Mapping[str, Any]) -> MixtureOfExperts | None:
    count = text.get("num_experts") or text.get("n_routed_experts") or text.get("num_local_experts")
    if not count:
        return None
    shared = int(text.get("n_shared_experts") or (1 if text.get("shared_expert_intermediate_size") else 0))
    per_token = text.get("num_experts_per_tok") or text["experts_per_token"]
    # the width vLLM builds each expert with: FusedMoE(intermediate_size=config.moe_intermediate_size)
    # in qwen3_moe.py and deepseek_v2.py, config.intermediate_size in gpt_oss.py and mixtral.py (v0.19.1)
    width = text.get("moe_intermediate_size") or text.get("intermediate_size")
    shared_width = text.get("shared_expert_intermediate_size") or (shared * int(width) if shared and width else None)
    dense = int(text.get("first_k_dense_replace") or 0) + len(text.get("mlp_only_layers") or [])
    return MixtureOfExperts(num_experts=int(count), experts_per_token=int(per_token), shared_experts=shared,
                            intermediate_size=int(width) if width else None,
                            shared_intermediate_size=int(shared_width) if shared_width else None,
                            dense_layers=dense)


def _attention_params(text: Mapping[str, Any], head_dim: int, mla: MultiLatentAttention | None) -> int:
    """One attention layer's projections (x2 on q when the output is gated; MLA's low-rank ones)."""
    hidden, heads = int(text["hidden_size"]), int(text["num_attention_heads"])
    if mla is not None:
        qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        q = hidden * mla.q_lora_rank + mla.q_lora_rank * heads * qk if mla.q_lora_rank else hidden * heads * qk
        kv = hidden * mla.cache_dim + mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
        return q + kv + heads * mla.v_head_dim * hidden
    kv_heads = int(text.get("num_key_value_heads") or heads)
    q_out = heads * head_dim * (2 if text.get("attn_output_gate") else 1)
    return hidden * q_out + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden


def _mlp_params(text: Mapping[str, Any], layers: int) -> int:
    """All layers' MLPs: dense, or routed experts (+ shared expert, router) after any dense layers."""
    hidden = int(text["hidden_size"])
    routed = experts(text)
    if routed is None:
        return layers * 3 * hidden * int(text["intermediate_size"])
    width = routed.intermediate_size
    if width is None:
        raise KeyError("moe_intermediate_size")
    shared = int(text.get("shared_expert_intermediate_size") or 0) or routed.shared_experts * width
    dense = int(text.get("first_k_dense_replace") or 0) + len(text.get("mlp_only_layers") or [])
    moe = routed.num_experts * 3 * hidden * width + 3 * hidden * shared + hidden * routed.num_experts
    return (layers - dense) * moe + dense * 3 * hidden * int(text.get("intermediate_size") or 0)


def estimate_params(text: Mapping[str, Any], full: int, linear: int, tied: bool) -> float:
    """Parameters (billions) from the shapes: embeddings (+ untied head), attention, Gated
    DeltaNet projections, dense or MoE MLPs. Norms, biases and vision towers are left out."""
    hidden, vocab = int(text["hidden_size"]), int(text["vocab_size"])
    heads = int(text["num_attention_heads"])
    mla = latent_attention(text)
    # llama.py, qwen3.py: `head_dim or hidden_size // total_num_heads`, a whole number of dims
    head_dim = int(text["head_dim"]) if text.get("head_dim") else hidden // heads
    total = vocab * hidden * (1 if tied else 2) + full * _attention_params(text, head_dim, mla)
    if linear:
        kh, vh = int(text["linear_num_key_heads"]), int(text["linear_num_value_heads"])
        kd, vd = int(text["linear_key_head_dim"]), int(text["linear_value_head_dim"])
        conv_dim = 2 * kh * kd + vh * vd
        gdn = hidden * (conv_dim + vh * vd + 2 * vh) + vh * vd * hidden
        gdn += conv_dim * int(text.get("linear_conv_kernel_dim") or 4)
        total += linear * gdn
    return (total + _mlp_params(text, full + linear)) / 1e9
