"""The KV cache the server actually sized, beside the plan's: `vllm:cache_config_info` on /metrics.

vLLM exports its CacheConfig as an info gauge whose labels are every field as a string
(`v1/metrics/loggers.py` `PrometheusStatLogger.log_metrics_info`, `config/cache.py`
`CacheConfig.metrics_info`, every release from v0.10): `num_gpu_blocks` and `block_size` from
v0.10, and from v0.26 vLLM's own `kv_cache_size_tokens` and `kv_cache_max_concurrency`
(`v1/core/kv_cache_utils.py` `update_kv_cache_capacity`). One label set per engine, its index in `engine`
(`log_metrics_info`); with several (data parallel) the line names the one that holds least.
Concurrency is vLLM's label where exported, else the blocks over what one max-model-len request
holds (`get_max_concurrency_for_kv_cache_config`, the plan's `blocks_per_request`).
"""

from __future__ import annotations

import re

import msgspec

from vllm_serving.smoke.expectations import PlannedKv
from vllm_serving.smoke.probe import CheckFailed

METRIC = "vllm:cache_config_info"
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


class MeasuredKv(msgspec.Struct, frozen=True):
    engine: str
    num_gpu_blocks: int
    block_size: int
    tokens: int
    concurrency: float


def cache_config_labels(metrics_text: str) -> list[dict[str, str]]:
    """The label sets of every `vllm:cache_config_info` sample, one per engine."""
    found = []
    for line in metrics_text.splitlines():
        if line.startswith(METRIC + "{"):
            found.append({k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL.findall(line)})
    return found


def measured(labels: dict[str, str], planned: PlannedKv) -> MeasuredKv:
    try:
        blocks, block = int(labels["num_gpu_blocks"]), int(labels["block_size"])
    except (KeyError, ValueError):
        raise CheckFailed(f"{METRIC} has no num_gpu_blocks and block_size (labels: "
                          f"{', '.join(sorted(labels)) or 'none'})") from None
    tokens = int(labels.get("kv_cache_size_tokens") or 0) or blocks * block
    own = labels.get("kv_cache_max_concurrency")
    concurrency = float(own) if own not in (None, "", "None") else blocks / max(1, planned.blocks_per_request)
    return MeasuredKv(labels.get("engine", "?"), blocks, block, tokens, concurrency)


def kv_cache_detail(metrics_text: str, planned: PlannedKv) -> str:
    """One line: measured blocks, tokens and concurrency beside the plan's, with the drift; raises
    CheckFailed when the server exports no cache figures or holds fewer than minConcurrency."""
    label_sets = cache_config_labels(metrics_text)
    if not label_sets:
        raise CheckFailed(f"/metrics lacks {METRIC}: the server does not say how large its KV cache is")
    engines = [measured(labels, planned) for labels in label_sets]
    least = min(engines, key=lambda m: m.concurrency)
    drift = (least.num_gpu_blocks - planned.num_gpu_blocks) / planned.num_gpu_blocks if planned.num_gpu_blocks else 0.0
    block_note = "" if least.block_size == planned.block_size else f" (plan: block {planned.block_size})"
    line = (f"{least.num_gpu_blocks:,} blocks x {least.block_size}{block_note} = {least.tokens:,} tokens, "
            f"{least.concurrency:.2f} requests of {planned.max_model_len:,} at once; plan {planned.num_gpu_blocks:,} "
            f"blocks, {planned.max_concurrency:.2f} (at worst {planned.pessimistic_max_concurrency:.2f}): "
            f"drift {drift:+.1%}" + (f", engine {least.engine} the least of {len(engines)}" if len(engines) > 1
                                     else ""))
    if planned.min_concurrency is not None and least.concurrency < planned.min_concurrency:
        raise CheckFailed(f"{line}; fewer than capacity.minConcurrency {planned.min_concurrency:g}")
    return line
