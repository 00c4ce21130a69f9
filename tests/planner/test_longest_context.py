"""The longest request the KV pool holds (`longest_context_by_memory`, what `maxModelLen: -1`
fits and what `vllm-stack capacity` reports as "memory alone would hold"), by hand arithmetic.

Qwen3-0.6B (config.json: 28 layers, 8 KV heads, head_dim 128, max_position_embeddings 40960) in
bfloat16 on an H100: one token of one layer is 2 x 8 x 128 x 2 = 4,096 bytes, a 16-token page
65,536 bytes; its 28 full-attention layers form one group of 28, so a block costs 28 pages
(kv_cache_utils.py get_num_blocks) and a request of L tokens needs ceil(L / 16) blocks.
"""

from __future__ import annotations

import pytest

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS
from vllm_serving.planner.capacity import CapacityInputs, plan

GIB = 2**30


@pytest.mark.parametrize(("available_gib", "blocks"), [
    (10, 10 * GIB // 65536 // 28),        # 5,851 blocks
    (0.01, int(0.01 * GIB) // 65536 // 28),  # 5 blocks
    (0.001, 0),                            # 16 pages: not one block of 28 layers
    (0, 0),
])
def test_the_longest_request_is_every_block_of_the_pool(available_gib: float, blocks: int) -> None:
    planned = plan(CapacityInputs(model=MODELS["Qwen3-0.6B"], gpu=GPUS["H100-80GB"], available_kv_gib=available_gib))
    assert planned.block_size == 16
    assert planned.longest_context_by_memory == blocks * 16
    assert planned.max_model_len_that_fits == min(blocks * 16, 40960)
    assert planned.context_limited_by == ("memory" if blocks * 16 < 40960 else "model")


def test_memory_beyond_the_model_length_is_reported_not_capped() -> None:
    """10 GiB hold 93,616 tokens, more than the model's 40,960: the plan says both."""
    planned = plan(CapacityInputs(model=MODELS["Qwen3-0.6B"], gpu=GPUS["H100-80GB"], available_kv_gib=10))
    assert (planned.longest_context_by_memory, planned.max_model_len_that_fits) == (93616, 40960)
    assert planned.vllm_logged_kv_tokens == 93616  # 5,851 blocks of 16 tokens
