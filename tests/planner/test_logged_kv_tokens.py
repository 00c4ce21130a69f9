"""vLLM's "GPU KV cache size: N tokens" as each release computes it.

Up to v0.20.0 `_report_kv_cache_config` (vllm/v1/core/kv_cache_utils.py) logs
`num_blocks // len(kv_cache_groups) * min_block_size`; from v0.20.2 it logs
`int(max_concurrency * max_model_len)`, so window and linear-attention groups count with their
capped per-request blocks. The two agree for a model whose layers all attend in full."""

from __future__ import annotations

import pytest

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS
from vllm_serving.planner.capacity import CapacityInputs, plan

AVAILABLE_GIB = 40.0  # the same pool for every release: only the log line's arithmetic differs


def _plan(model: str, version: tuple[int, int, int], max_len: int) -> object:
    return plan(CapacityInputs(model=MODELS[model], gpu=GPUS["H100-80GB"], tp=1, max_model_len=max_len,
                               vllm_version=version, available_kv_gib=AVAILABLE_GIB))


@pytest.mark.parametrize("version", [(0, 19, 1), (0, 20, 0)])
def test_up_to_v0_20_0_the_log_divides_the_blocks_by_the_groups(version: tuple[int, int, int]) -> None:
    p = _plan("gpt-oss-20b", version, 131072)
    assert p.vllm_logged_kv_tokens < int(p.max_concurrency * p.max_model_len)


@pytest.mark.parametrize("version", [(0, 20, 2), (0, 34, 0)])
def test_from_v0_20_2_the_log_is_concurrency_times_max_model_len(version: tuple[int, int, int]) -> None:
    p = _plan("gpt-oss-20b", version, 131072)
    assert p.vllm_logged_kv_tokens == int(p.max_concurrency * p.max_model_len)


def test_a_full_attention_model_logs_about_the_same_either_way() -> None:
    old, new = _plan("Qwen3-8B", (0, 19, 1), 32768), _plan("Qwen3-8B", (0, 20, 2), 32768)
    assert old.num_gpu_blocks == new.num_gpu_blocks
    # whole blocks per request: concurrency x length stays within one request of the pool
    assert 0 <= old.vllm_logged_kv_tokens - new.vllm_logged_kv_tokens <= 32768
