"""Sliding-window models (gpt-oss, Gemma 3) as vLLM v0.19.1 lays out their KV cache.

`vllm_window_figures` transcribes what v0.19.1 computes from a model's config.json facts, the
memory and the scheduler's token budget; each step cites the function it follows (paths under
`vllm/` of the wheel). It shares no code with the planner and reads no catalog entry: gpt-oss-20b
from its vendored config.json, Gemma 3 27B from the facts written out below.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from tests.paths import ROOT
from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS
from vllm_serving.planner.capacity import CapacityInputs, plan
from vllm_serving.planner.memory_budget import hybrid_kv_cache_manager

GIB = 2**30
GPT_OSS_20B = json.loads((ROOT / "tests" / "catalog" / "configs" / "openai--gpt-oss-20b.config.json").read_text())
# https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json, text_config; layer_types as
# transformers' Gemma3TextConfig derives them from sliding_window_pattern 6 (every 6th layer full).
GEMMA_3_27B: dict[str, Any] = {
    "num_hidden_layers": 62, "num_key_value_heads": 16, "head_dim": 128, "sliding_window": 1024,
    "max_position_embeddings": 131072,
    "layer_types": ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(62)],
}


def cdiv(a: int, b: int) -> int:
    """vllm/utils/math_utils.py cdiv."""
    return -(a // -b)


def vllm_window_figures(config: dict[str, Any], *, tp: int, dtype_bytes: int, max_model_len: int,
                        max_num_batched_tokens: int, available_memory: int,
                        hybrid_manager: bool = True) -> dict[str, float]:
    """Block size, "GPU KV cache size" tokens, "Maximum concurrency" and the longest request."""
    # platforms/interface.py update_block_size_for_backend: FlashAttention, FlashInfer and Triton
    # all take CacheConfig.DEFAULT_BLOCK_SIZE.
    block_size = 16
    # model_executor/layers/attention/attention.py Attention.get_kv_cache_spec: a layer with a
    # window gets SlidingWindowSpec, the others FullAttentionSpec; both page the same bytes
    # (kv_cache_interface.py AttentionSpec.real_page_size_bytes: K and V of the GPU's KV heads).
    num_kv_heads = max(1, config["num_key_value_heads"] // tp)
    page_size = 2 * block_size * num_kv_heads * config["head_dim"] * dtype_bytes
    kinds = ["sliding" if t == "sliding_attention" else "full" for t in config["layer_types"]]
    if not hybrid_manager:
        # kv_cache_utils.py unify_hybrid_kv_cache_specs: windows become full attention.
        kinds = ["full"] * len(kinds)
    same_type_layers = Counter(kinds)
    # kv_cache_utils.py _get_kv_cache_groups_uniform_page_size: group size = fewest layers of a
    # type (the most when within 1.5x); each type splits into cdiv(n, group_size) groups.
    fewest, most = min(same_type_layers.values()), max(same_type_layers.values())
    group_size = most if most < fewest * 1.5 else fewest
    groups = [kind for kind, n in same_type_layers.items() for _ in range(cdiv(n, group_size))]
    # kv_cache_utils.py get_kv_cache_config_from_groups -> get_num_blocks.
    num_blocks = available_memory // page_size // group_size
    # kv_cache_utils.py _report_kv_cache_config.
    tokens = num_blocks // len(groups) * block_size

    def blocks_per_request(length: int) -> int:
        # FullAttentionSpec.max_memory_usage_bytes: cdiv(max_model_len, block) pages;
        # SlidingWindowSpec.max_memory_usage_bytes: (cdiv(min(window - 1 + max_num_batched_tokens,
        # max_model_len), block) + 1) pages; get_max_concurrency_for_kv_cache_config sums them.
        window = min(config["sliding_window"] - 1 + max_num_batched_tokens, length)
        need = {"full": cdiv(length, block_size), "sliding": cdiv(window, block_size) + 1}
        return sum(need[kind] for kind in groups)

    # kv_cache_utils.py _estimate_max_model_len_from_groups: bisection up to max_model_len.
    low, high = 0, config["max_position_embeddings"]
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if blocks_per_request(mid) <= num_blocks else (low, mid - 1)
    return {"block_size": block_size, "tokens": tokens, "groups": len(groups),
            "max_concurrency": num_blocks / blocks_per_request(max_model_len), "longest": low}


def _planned(model: str, gpu: str, **inputs: Any) -> dict[str, float]:
    p = plan(CapacityInputs(model=MODELS[model], gpu=GPUS[gpu], **inputs))
    return {"block_size": p.block_size, "tokens": p.vllm_logged_kv_tokens, "max_concurrency": p.max_concurrency,
            "longest": p.max_model_len_that_fits}


def test_gpt_oss_20b_on_h100() -> None:
    """12 window + 12 full layers: two groups of 12; a 128k request holds 8192 full blocks plus
    cdiv(127 + 8192, 16) + 1 = 521 window blocks, not 2 x 8192."""
    vllm = vllm_window_figures(GPT_OSS_20B, tp=1, dtype_bytes=2, max_model_len=131072,
                               max_num_batched_tokens=8192, available_memory=60 * GIB)
    assert vllm["groups"] == 2
    assert (vllm["tokens"], round(vllm["max_concurrency"], 2)) == (1_310_720, 18.80)
    planned = _planned("gpt-oss-20b", "H100-80GB", available_kv_gib=60, max_num_batched_tokens=8192)
    assert planned == pytest.approx({k: vllm[k] for k in planned})


def test_gemma_3_27b_on_two_a100s() -> None:
    """52 window + 10 full layers: groups of 10 (6 window groups, 8 padding slots) + 1 full."""
    vllm = vllm_window_figures(GEMMA_3_27B, tp=2, dtype_bytes=2, max_model_len=131072,
                               max_num_batched_tokens=2048, available_memory=30 * GIB)
    assert vllm["groups"] == 7
    assert (vllm["tokens"], round(vllm["max_concurrency"], 2), vllm["longest"]) == (112_336, 5.26, 131072)
    planned = _planned("gemma-3-27b-it", "A100-80GB", tp=2, available_kv_gib=30, max_num_batched_tokens=2048)
    assert planned == pytest.approx({k: vllm[k] for k in planned})


def test_gemma_3_27b_longest_context_when_memory_binds() -> None:
    """Where the pool is short of a full-length request, the longest one is the bisection's."""
    vllm = vllm_window_figures(GEMMA_3_27B, tp=2, dtype_bytes=2, max_model_len=131072,
                               max_num_batched_tokens=2048, available_memory=4 * GIB)
    assert 0 < vllm["longest"] < 131072 and vllm["max_concurrency"] < 1
    planned = _planned("gemma-3-27b-it", "A100-80GB", tp=2, available_kv_gib=4, max_num_batched_tokens=2048)
    assert planned == pytest.approx({k: vllm[k] for k in planned})


def test_disabled_hybrid_manager_keeps_every_token() -> None:
    """--disable-hybrid-kv-cache-manager: one group of all 62 layers, every layer full length."""
    vllm = vllm_window_figures(GEMMA_3_27B, tp=2, dtype_bytes=2, max_model_len=131072,
                               max_num_batched_tokens=2048, available_memory=30 * GIB, hybrid_manager=False)
    assert vllm["groups"] == 1
    planned = _planned("gemma-3-27b-it", "A100-80GB", tp=2, available_kv_gib=30, max_num_batched_tokens=2048,
                       hybrid_kv_cache_manager=False)
    assert planned == pytest.approx({k: vllm[k] for k in planned})
    assert planned["max_concurrency"] < _planned("gemma-3-27b-it", "A100-80GB", tp=2, available_kv_gib=30,
                                                 max_num_batched_tokens=2048)["max_concurrency"] / 4


# A public start-up log (tests/fixtures/startup_logs/dennislee22-gpt-oss-120b-a100-tp4-two-nodes.yaml,
# v0.10.1.1, whose SlidingWindowSpec, grouping and report are v0.19.1's): gpt-oss-120b, TP 4,
# max_model_len 16384, max_num_batched_tokens 2048, "Available KV cache memory: 45.32 GiB",
# "GPU KV cache size: 2,640,144 tokens", "Maximum concurrency for 16,384 tokens per request: 284.25x".
# 45.32 is rounded: 330,018-330,019 blocks of 18 layers x 8 KiB (45.3211-45.3212 GiB) give both.
def test_public_gpt_oss_120b_log_exactly() -> None:
    planned = plan(CapacityInputs(model=MODELS["gpt-oss-120b"], gpu=GPUS["A100-80GB"], tp=4, max_model_len=16384,
                                  max_num_batched_tokens=2048, available_kv_gib=45.3211))
    assert (planned.vllm_logged_kv_tokens, f"{planned.max_concurrency:.2f}") == (2_640_144, "284.25")
    # counted as full attention, the same memory would have logged about half the concurrency
    full = plan(CapacityInputs(model=MODELS["gpt-oss-120b"], gpu=GPUS["A100-80GB"], tp=4, max_model_len=16384,
                               max_num_batched_tokens=2048, available_kv_gib=45.3211, hybrid_kv_cache_manager=False))
    assert full.max_concurrency < 0.6 * planned.max_concurrency


def test_window_layers_follow_the_scheduler_budget() -> None:
    """A larger max_num_batched_tokens makes each window group hold more blocks per request."""
    small = _planned("gpt-oss-20b", "H100-80GB", available_kv_gib=60, max_num_batched_tokens=2048)
    large = _planned("gpt-oss-20b", "H100-80GB", available_kv_gib=60, max_num_batched_tokens=32768)
    assert large["max_concurrency"] < small["max_concurrency"]
    assert large["tokens"] == small["tokens"]  # the pool itself does not change


@pytest.mark.parametrize(("extra_args", "on"), [
    ((), True),
    (("--disable-hybrid-kv-cache-manager",), False),
    (("--kv-transfer-config", '{"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}'), False),
    (("--kv-transfer-config={}", "--no-disable-hybrid-kv-cache-manager"), True),
    (("--kv-events-config", '{"enable_kv_cache_events": true}'), False),
])
def test_hybrid_manager_from_extra_args(extra_args: tuple[str, ...], on: bool) -> None:
    """config/vllm.py VllmConfig.__post_init__: off when asked, or for a KV connector or KV events
    unless kept on explicitly (events with it kept on make vLLM refuse to start)."""
    assert hybrid_kv_cache_manager("v0.19.1", extra_args) is on


def test_a_window_and_step_that_end_on_a_block_boundary() -> None:
    """gpt-oss-20b at max_num_batched_tokens 2049: the window keeps 128 - 1 + 2049 = 2176 tokens,
    exactly 136 blocks, and one more for a window starting mid-block: 137 (not 137 + 1)."""
    vllm = vllm_window_figures(GPT_OSS_20B, tp=1, dtype_bytes=2, max_model_len=131072,
                               max_num_batched_tokens=2049, available_memory=60 * GIB)
    planned = _planned("gpt-oss-20b", "H100-80GB", available_kv_gib=60, max_num_batched_tokens=2049)
    assert planned == pytest.approx({k: vllm[k] for k in planned})


def test_layer_types_exactly_one_and_a_half_apart_group_by_the_fewer() -> None:
    """12 window and 18 full layers: 18 < 12 x 1.5 is false, so groups of 12 (vLLM's strict `<`):
    one window group and cdiv(18, 12) = 2 full ones, not one group of each at 18 layers."""
    config = {**GPT_OSS_20B, "num_hidden_layers": 30,
              "layer_types": ["sliding_attention"] * 12 + ["full_attention"] * 18}
    vllm = vllm_window_figures(config, tp=1, dtype_bytes=2, max_model_len=131072,
                               max_num_batched_tokens=8192, available_memory=60 * GIB)
    assert vllm["groups"] == 3
    model = MODELS["gpt-oss-20b"].model_copy(update={"num_hidden_layers": 30, "full_attention_layers": 30})
    p = plan(CapacityInputs(model=model, gpu=GPUS["H100-80GB"], available_kv_gib=60, max_num_batched_tokens=8192))
    planned = {"block_size": p.block_size, "tokens": p.vllm_logged_kv_tokens, "max_concurrency": p.max_concurrency,
               "longest": p.max_model_len_that_fits}
    assert planned == pytest.approx({k: vllm[k] for k in planned})
