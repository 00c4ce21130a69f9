"""KV sizing over tensor- and pipeline-parallel sizes and layer counts, against a brute-force
reference that does what vLLM v0.19.1's engine does, step by step:

- each pipeline rank takes the layers `get_pp_indices` gives it (vllm/distributed/utils.py: an even
  split, the remainder spread over all ranks but the last, from the second-to-last backwards);
- each rank's KV heads are `max(1, kv_heads // tp)` (vllm/config/model.py `get_num_kv_heads`);
- each rank fills its memory with blocks of one page per layer, one block at a time, until the next
  does not fit (vllm/v1/core/kv_cache_utils.py `get_num_blocks`);
- the engine keeps the smallest rank's block count for every rank (`get_kv_cache_configs`,
  "Change the num_blocks of each rank to the smallest among all ranks").

Attention-only models (one layer type): the planner's layer-count arithmetic (`kv_layout`) must
give the same blocks, tokens and concurrency whenever pipeline stages do not divide the layers.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.planner.kv_sizing import kv_layout

BLOCK = 16


def pp_layers(num_layers: int, pp: int) -> list[int]:
    """Layers per rank, as vLLM v0.19.1's get_pp_indices partitions them."""
    partitions = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        partitions[-i] += 1
    return partitions


def blocks_that_fit(memory: int, page: int, layers: int) -> int:
    """Blocks one rank holds: allocate a page for every layer, one block at a time."""
    blocks, used = 0, 0
    while used + page * layers <= memory:
        used += page * layers
        blocks += 1
    return blocks


def model(layers: int, kv_heads: int, head_dim: int) -> ModelArchitecture:
    return ModelArchitecture(
        architecture="TestForCausalLM", model_type="test", family="test", params_billion=1.0,
        num_hidden_layers=layers, hidden_size=kv_heads * head_dim * 4, vocab_size=32000,
        max_position_embeddings=131072, num_attention_heads=kv_heads * 4, num_key_value_heads=kv_heads,
        head_dim=head_dim, full_attention_layers=layers,
    )


@settings(max_examples=200, deadline=None)
@given(layers=st.integers(1, 96), pp=st.integers(1, 8), tp=st.sampled_from([1, 2, 4, 8]),
       kv_heads=st.sampled_from([1, 2, 4, 8, 16]), head_dim=st.sampled_from([64, 128, 256]),
       kv_bytes=st.sampled_from([1, 2]), blocks_wanted=st.integers(0, 600), slack=st.integers(0, 10**6),
       length=st.integers(1, 65536))
def test_blocks_tokens_and_concurrency_match_the_brute_force_engine(
    layers: int, pp: int, tp: int, kv_heads: int, head_dim: int, kv_bytes: int, blocks_wanted: int, slack: int,
    length: int,
) -> None:
    if pp > layers:
        return  # vLLM refuses more stages than layers
    page = BLOCK * 2 * max(1, kv_heads // tp) * head_dim * kv_bytes
    memory = blocks_wanted * page * math.ceil(layers / pp) + slack
    reference = min(blocks_that_fit(memory, page, n) for n in pp_layers(layers, pp))

    layout = kv_layout(model(layers, kv_heads, head_dim), tp=tp, pp=pp, compute_bytes=2, kv_bytes=kv_bytes,
                       max_model_len=length, prefix_caching=True)
    blocks = layout.num_blocks(memory)
    assert blocks == reference, (layers, pp, pp_layers(layers, pp))
    assert layout.logged_tokens(blocks) == reference * BLOCK
    assert layout.max_concurrency(blocks) == reference / math.ceil(length / BLOCK)


def test_the_reference_partitions_as_vllm_logs_it() -> None:
    """vLLM logs "Hidden layers were unevenly partitioned: [21,22,21]" for 64 layers on 3 stages."""
    assert pp_layers(64, 3) == [21, 22, 21]
    assert pp_layers(62, 4) == [15, 16, 16, 15]  # the remainder skips the first and last
    assert pp_layers(5, 2) == [3, 2]
