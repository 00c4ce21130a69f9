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
- Sliding-window layers (gpt-oss, Gemma 3) are a layer type of their own
  (`model_executor/layers/attention/attention.py` `Attention.get_kv_cache_spec` ->
  `SlidingWindowSpec`), grouped like the others; a request holds, per window group,
  `SlidingWindowSpec.max_memory_usage_bytes`: the last window - 1 tokens plus one step's
  `max_num_batched_tokens`, one block more for a window starting mid-block, never beyond the
  request. With the hybrid KV cache manager off (`config/vllm.py` `VllmConfig.__post_init__`:
  `--disable-hybrid-kv-cache-manager`, `--kv-events-config`, or `--kv-transfer-config` unless
  re-enabled), `kv_cache_utils.py` `unify_hybrid_kv_cache_specs` turns them into full attention.
- Multi-head latent attention (DeepSeek-V3/R1) caches one latent per token and layer:
  `MLAAttention` (`model_executor/layers/attention/mla_attention.py`) has head_size
  kv_lora_rank + qk_rope_head_dim and one KV head on every TP rank, and
  `MLAAttentionSpec.real_page_size_bytes` has no separate K and V; its block size is the
  backend's (`mla_backends`).
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
    attention_layers: int
    """Attention layers on this GPU keeping per-token KV, full and sliding-window."""
    attention_groups: int
    """Groups of full-attention layers (every token of a request)."""
    sliding_groups: int = 0
    """Groups of sliding-window layers (the window of a request)."""
    sliding_window: int | None = None
    """Tokens a sliding-window layer attends to; None without window groups."""
    max_num_batched_tokens: int = 0
    """The scheduler's token budget per step: what a window group holds beyond the window."""
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
        return self.attention_groups + self.sliding_groups + self.linear_groups

    def num_blocks(self, available_bytes: int) -> int:
        """get_num_blocks: the pool divided by the page and the group size."""
        return max(0, available_bytes // self.page_size_bytes // self.group_size)

    def window_blocks(self, length: int) -> int:
        """SlidingWindowSpec.max_memory_usage_bytes in pages, for a request of `length` tokens."""
        if self.sliding_window is None:
            return 0
        tokens = min(self.sliding_window - 1 + self.max_num_batched_tokens, length)
        return math.ceil(tokens / self.block_size) + 1

    def blocks_per_request(self, length: int) -> int:
        """Blocks one request of `length` tokens needs (num_block_per_request in vLLM)."""
        attention = self.attention_groups * math.ceil(length / self.block_size)
        return attention + self.sliding_groups * self.window_blocks(length) + self.linear_groups * self.state_blocks

    def logged_tokens(self, num_blocks: int) -> int:
        """"GPU KV cache size: N tokens": blocks per group times the smallest group block size."""
        smallest = min(self.block_size, self.mamba_block_size or self.block_size)
        return num_blocks // self.num_groups * smallest

    def max_concurrency(self, num_blocks: int) -> float:
        """"Maximum concurrency for max_model_len tokens per request"."""
        return num_blocks / self.blocks_per_request(self.max_model_len)

    def longest_request(self, num_blocks: int, limit: int) -> int:
        """Longest request the pool holds, 0 if none: the largest length whose blocks fit, found
        by bisection as vLLM finds it (kv_cache_utils.py _estimate_max_model_len_from_groups).
        Without full-attention groups a request stops growing at the window: then `limit`."""
        if not self.attention_groups and self.blocks_per_request(limit) <= num_blocks:
            return limit
        low, high = 0, max(0, num_blocks) * self.block_size
        while low < high:
            mid = (low + high + 1) // 2
            if self.blocks_per_request(mid) <= num_blocks:
                low = mid
            else:
                high = mid - 1
        return low


def attention_token_bytes(model: ModelArchitecture, *, tp: int, kv_bytes: int, mla: bool) -> int:
    """One token of one attention layer on one GPU."""
    if mla and model.mla is not None:
        # MLAAttentionSpec.real_page_size_bytes for one token: one latent "head" of
        # kv_lora_rank + qk_rope_head_dim values, the same on every TP rank.
        return model.mla.cache_dim * kv_bytes
    # FullAttentionSpec.real_page_size_bytes for one token: K and V of the GPU's KV heads
    # (replicated, never below one, when TP exceeds the KV heads).
    return 2 * max(1, model.num_key_value_heads // tp) * model.head_dim * kv_bytes


def _group_size(counts: list[int]) -> int:
    """Layers per group: the smallest type's count, or the largest when they are within 1.5x,
    to limit padding layers (_get_kv_cache_groups_uniform_page_size)."""
    smallest, largest = min(counts), max(counts)
    return largest if largest < 1.5 * smallest else smallest


def kv_layout(
    model: ModelArchitecture, *, tp: int, pp: int, compute_bytes: int, kv_bytes: int, max_model_len: int,
    prefix_caching: bool, speculative_tokens: int = 0, draft_attention_layers: int = 0,
    block_size: int | None = None, mla: bool = False, hybrid_kv_cache_manager: bool = True,
    max_num_batched_tokens: int = 0,
) -> KvLayout:
    """The layout vLLM v0.19.1 builds; `block_size` is the backend's (or a user's `--block-size`);
    a hybrid raises it. `mla`: the model runs multi-head latent attention (vLLM's use_mla)."""
    window_layers = model.sliding_window_layers if hybrid_kv_cache_manager else 0
    full = math.ceil((model.full_attention_layers - window_layers + draft_attention_layers) / pp)
    sliding = math.ceil(window_layers / pp)
    lin = model.linear_attention
    linear = math.ceil(lin.num_layers / pp) if lin is not None else 0
    token_bytes = attention_token_bytes(model, tp=tp, kv_bytes=kv_bytes, mla=mla)
    block = block_size or DEFAULT_BLOCK_SIZE
    mode: MambaCacheMode = "align" if prefix_caching and linear else "none"
    mamba_block: int | None = None
    if linear:
        state = linear_state_bytes(model, tp, compute_bytes, speculative_tokens)
        block = max(block, BLOCK_ALIGNMENT * math.ceil(state / (BLOCK_ALIGNMENT * token_bytes)))
        mamba_block = block if mode == "align" else max_model_len
    group_size = _group_size([n for n in (full, sliding, linear) if n])
    return KvLayout(
        block_size=block, page_size_bytes=block * token_bytes, mamba_cache_mode=mode,
        mamba_block_size=mamba_block, group_size=group_size, attention_layers=full + sliding,
        attention_groups=math.ceil(full / group_size), sliding_groups=math.ceil(sliding / group_size),
        sliding_window=model.sliding_window if sliding else None,
        max_num_batched_tokens=max_num_batched_tokens if sliding else 0,
        linear_groups=math.ceil(linear / group_size),
        state_blocks=STATE_BLOCKS[mode] + speculative_tokens if linear else 0,
        max_model_len=max_model_len,
    )
