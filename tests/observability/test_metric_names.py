"""Every metric the dashboard and the alerts query is one the stack's vLLM release exports, with
prometheus_client's suffixes exactly; and the releases really differ where the check says they do."""

from __future__ import annotations

import pytest

from tests.observability.helpers import observed_spec
from vllm_serving.engine.release_registry import known_versions, load
from vllm_serving.observability.queries import used_queries
from vllm_serving.observability.series import exported_series, releases_exporting, unknown_series

PINNED = "0.19.1"
OLDEST = known_versions()[0]


def _used(spec_stack: str = "a100-k8s") -> list[str]:
    return [name for q in used_queries(observed_spec(spec_stack)) for name in q.metrics]


@pytest.mark.parametrize("stack", ["a100-k8s", "v100"])
def test_no_query_uses_a_name_the_pinned_release_does_not_export(stack: str) -> None:
    used = _used(stack)
    assert "vllm:kv_cache_usage_perc" in used and "up" in used
    assert unknown_series(used, load(PINNED)) == []


@pytest.mark.parametrize("version", known_versions())
def test_the_queries_hold_for_every_registered_release(version: str) -> None:
    """A stack pinned to any release with a registry gets a dashboard without empty panels."""
    assert unknown_series(_used(), load(version)) == []


@pytest.mark.parametrize(("series", "exported"), [
    ("vllm:prompt_tokens_total", True),  # Counter("vllm:prompt_tokens") as prometheus_client exposes it
    ("vllm:prompt_tokens", False),  # the bare counter name is never a series
    ("vllm:time_to_first_token_seconds_bucket", True),
    ("vllm:time_to_first_token_seconds_sum", True),
    ("vllm:time_to_first_token_seconds_count", True),
    ("vllm:time_to_first_token_seconds", False),  # nor is the bare histogram name
    ("vllm:time_to_first_token_seconds_total", False),
    ("vllm:kv_cache_usage_perc", True),
    ("vllm:kv_cache_usage_perc_total", False),  # a gauge gains no suffix
    ("vllm:iteration_tokens_total_bucket", True),  # a histogram whose name ends in _total keeps it
    ("vllm:iteration_tokens_total", False),
    ("vllm:estimated_flops_per_gpu_total", True),  # a counter named ..._total: one _total, not two
    ("vllm:estimated_flops_per_gpu_total_total", False),
    ("vllm:prompt_tokens_created", False),  # not exported with several API servers (multiprocess mode)
])
def test_suffixes_are_exact(series: str, exported: bool) -> None:
    assert (series in exported_series(load(PINNED))) is exported


def test_the_oldest_release_differs_where_vllm_changed() -> None:
    """vLLM production-stack's dashboard still queries vllm:gpu_cache_usage_perc: exported by the
    oldest registered release, hidden in v0.11.0 (only with --show-hidden-metrics-for-version),
    gone in v0.19.1; the per-request TPOT histogram appeared in v0.11.0."""
    old, hidden, pinned = load(OLDEST), load("0.11.0"), load(PINNED)
    legacy = ["vllm:gpu_cache_usage_perc"]
    assert unknown_series(legacy, old) == []
    assert unknown_series(legacy, hidden) == legacy
    assert unknown_series(legacy, hidden, show_hidden=True) == []
    assert unknown_series(legacy, pinned) == legacy
    tpot = ["vllm:request_time_per_output_token_seconds_bucket"]
    assert unknown_series(tpot, old) == tpot and unknown_series(tpot, pinned) == []
    releases = tuple(load(v) for v in known_versions())
    assert releases_exporting(legacy[0], releases) == [f"v{OLDEST}"]


def test_prometheus_own_series_only() -> None:
    """`up` is Prometheus's own; any other name outside vLLM's is unknown."""
    assert unknown_series(["up", "process_cpu_seconds_total", "vllm:up"], load(PINNED)) == \
        ["process_cpu_seconds_total", "vllm:up"]
