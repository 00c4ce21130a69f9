"""How vLLM v0.19.1 lays out one GPU's KV cache: block size, page, layer groups, blocks per request.

Pure arithmetic over the model's facts; the memory it divides comes from the caller. Each step
follows the v0.19.1 source (paths under `vllm/` of the wheel):
- `model_executor/layers/mamba/mamba_utils.py` `gated_delta_net_state_shape`: a linear-attention
  layer keeps a conv state of (kernel - 1 + speculative tokens) rows and a recurrent state.
- `model_executor/models/config.py` `MambaModelConfig`: prefix caching puts Gated DeltaNet models
  in "align" mode (they lack "all" support); `HybridAttentionMambaModelConfig`: the attention
  block grows in steps of 16 until its page holds one layer's state, which is padded to it.
- `v1/kv_cache_interface.py` `MambaSpec.max_memory_usage_bytes`: a request holds 1 (none) or
  2 (align) state blocks per linear-attention group, plus one per speculative token.
- `v1/core/kv_cache_utils.py` `_get_kv_cache_groups_uniform_page_size` (group size),
  `get_num_blocks`, `_report_kv_cache_config` (the logged token figure) and
  `get_max_concurrency_for_kv_cache_config`.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict

from vllm_serving.catalog.models import ModelArchitecture

# CacheConfig.DEFAULT_BLOCK_SIZE: tokens per KV page on CUDA.
DEFAULT_BLOCK_SIZE = 16
# HybridAttentionMambaModelConfig: FlashAttention-style kernels need blocks in multiples of 16.
BLOCK_ALIGNMENT = 16

MambaCacheMode = Literal["none", "align"]
# MambaSpec.max_memory_usage_bytes: state blocks per request and linear-attention group,
# before the one extra block per speculative token.
STATE_BLOCKS: dict[MambaCacheMode, int] = {"none": 1, "align": 2}


def default_prefix_caching(model: ModelArchitecture) -> bool:
    """vLLM's default for `--enable-prefix-caching`: on for attention-only models, off for hybrids
    (config/model.py `is_prefix_caching_supported`; engine/arg_utils.py applies it when unset)."""
    return model.linear_attention is None


def linear_state_bytes(model: ModelArchitecture, tp: int, compute_bytes: int, speculative_tokens: int) -> int:
    """One linear-attention layer's state for one sequence on one GPU (MambaSpec.page_size_bytes,
    unpadded): conv rows x conv channels in the compute dtype (mamba_cache_dtype auto) plus value
    heads x value dim x key dim in the state dtype (config.json `mamba_ssm_dtype`, else compute)."""
    lin = model.linear_attention
    if lin is None:
        return 0
    conv_dim = 2 * lin.num_key_heads * lin.key_head_dim + lin.num_value_heads * lin.value_head_dim
    conv = (lin.conv_kernel - 1 + speculative_tokens) * math.ceil(conv_dim / tp) * compute_bytes
    recurrent = math.ceil(lin.num_value_heads / tp) * lin.value_head_dim * lin.key_head_dim
    return conv + recurrent * (lin.state_dtype_bytes or compute_bytes)


class KvLayout(BaseModel):
    """One GPU's KV cache as vLLM groups it; every page (one block of one layer) has one size."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    block_size: int
    """Attention tokens per block (after the hybrid enlargement)."""
    page_size_bytes: int
    """One block of one layer: the attention page; linear-attention states are padded to it."""
    mamba_cache_mode: MambaCacheMode
    mamba_block_size: int | None
    """Block size of the linear-attention groups: the attention block in align mode, else
    max_model_len (MambaModelConfig); None without linear attention."""
    group_size: int
    """Layers per group: one memory pool per group slot."""
    attention_groups: int
    linear_groups: int
    state_blocks: int
    """Blocks a request holds in each linear-attention group."""
    max_model_len: int

    @property
    def token_bytes(self) -> int:
        """One token of one attention layer."""
        return self.page_size_bytes // self.block_size

    @property
    def num_groups(self) -> int:
        return self.attention_groups + self.linear_groups

    def num_blocks(self, available_bytes: int) -> int:
        """get_num_blocks: the pool divided by the page and the group size."""
        return max(0, available_bytes // self.page_size_bytes // self.group_size)

    def blocks_per_request(self, length: int) -> int:
        """Blocks one request of `length` tokens needs (num_block_per_request in vLLM)."""
        attention = self.attention_groups * math.ceil(length / self.block_size)
        return attention + self.linear_groups * self.state_blocks

    def logged_tokens(self, num_blocks: int) -> int:
        """"GPU KV cache size: N tokens": blocks per group times the smallest group block size."""
        smallest = min(self.block_size, self.mamba_block_size or self.block_size)
        return num_blocks // self.num_groups * smallest

    def max_concurrency(self, num_blocks: int) -> float:
        """"Maximum concurrency for max_model_len tokens per request"."""
        return num_blocks / self.blocks_per_request(self.max_model_len)

    def longest_request(self, num_blocks: int) -> int:
        """Longest request the pool holds (vLLM binary-searches the same inequality); 0 if none."""
        free = num_blocks - self.linear_groups * self.state_blocks
        return max(0, free // self.attention_groups * self.block_size)


def kv_layout(
    model: ModelArchitecture, *, tp: int, pp: int, compute_bytes: int, kv_bytes: int, max_model_len: int,
    prefix_caching: bool, speculative_tokens: int = 0, draft_attention_layers: int = 0,
    block_size: int | None = None,
) -> KvLayout:
    """The layout vLLM v0.19.1 builds; `block_size` is a user's `--block-size` (a hybrid raises it)."""
    full = math.ceil((model.full_attention_layers + draft_attention_layers) / pp)
    lin = model.linear_attention
    linear = math.ceil(lin.num_layers / pp) if lin is not None else 0
    # FullAttentionSpec.real_page_size_bytes for one token: K and V of the GPU's KV heads
    # (replicated, never below one, when TP exceeds the KV heads).
    token_bytes = 2 * max(1, model.num_key_value_heads // tp) * model.head_dim * kv_bytes
    block = block_size or DEFAULT_BLOCK_SIZE
    mode: MambaCacheMode = "align" if prefix_caching and linear else "none"
    mamba_block: int | None = None
    if linear:
        state = linear_state_bytes(model, tp, compute_bytes, speculative_tokens)
        block = max(block, BLOCK_ALIGNMENT * math.ceil(state / (BLOCK_ALIGNMENT * token_bytes)))
        mamba_block = block if mode == "align" else max_model_len
    # Layers of each type split into groups of `group_size` (the smaller count, or the larger
    # when they are within 1.5x, to limit padding layers).
    counts = [n for n in (full, linear) if n]
    group_size = min(counts)
    if max(counts) < 1.5 * group_size:
        group_size = max(counts)
    return KvLayout(
        block_size=block, page_size_bytes=block * token_bytes, mamba_cache_mode=mode,
        mamba_block_size=mamba_block, group_size=group_size,
        attention_groups=math.ceil(full / group_size),
        linear_groups=math.ceil(linear / group_size) if linear else 0,
        state_blocks=STATE_BLOCKS[mode] + speculative_tokens if linear else 0,
        max_model_len=max_model_len,
    )
