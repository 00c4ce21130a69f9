"""The PromQL reader: metric names apart from functions, label names and durations; broken queries."""

from __future__ import annotations

import pytest

from vllm_serving.engine.release_registry import load
from vllm_serving.observability.promql import metric_names, read, variable_selector
from vllm_serving.observability.series import unknown_series


@pytest.mark.parametrize(("expr", "names"), [
    ("vllm:num_requests_running", ["vllm:num_requests_running"]),
    ('sum by (le, model_name) (rate(vllm:time_to_first_token_seconds_bucket{job="x",le!="+Inf"}[5m]))',
     ["vllm:time_to_first_token_seconds_bucket"]),
    ("sum(rate(a_total[1h30m])) without (instance) / on (job) group_left (engine) b", ["a_total", "b"]),
    ("max_over_time(x[10m:1m]) offset 5m > bool 3 unless absent(up)", ["x", "up"]),
    ('{__name__="vllm:kv_cache_usage_perc", job="y"} > 0.9', ["vllm:kv_cache_usage_perc"]),
    ('sum(rate(vllm:prompt_tokens_total{model_name=~"$model_name"}[$__rate_interval])) * ${factor}',
     ["vllm:prompt_tokens_total"]),
    ("SUM BY (job) (x) and on() y # z is a comment", ["x", "y"]),
    ("label_replace(up, \"dst\", \"$1\", \"instance\", \"(.*):.*\")", ["up"]),
    ("histogram_quantile(0.99, x_bucket) > 1e3 or vector(0x1f)", ["x_bucket"]),
    ('{__name__=~"vllm:.*_total"} > 0', []),  # a regex on the name selects no name in particular
    ('{__name__!="up"}', []),
])
def test_metric_names_apart_from_everything_else(expr: str, names: list[str]) -> None:
    reading = read(expr)
    assert reading.problems == ()
    assert list(reading.metrics) == names


@pytest.mark.parametrize(("expr", "problem"), [
    ("sum(rate(x[5m])", "unclosed '('"),
    ("rate(x[5m)]", "unbalanced ')'"),
    ("x{job=\"a\"", "unclosed '{'"),
    ("rates(x[5m])", "unknown function 'rates'"),
    ("label_values(x, job)", "unknown function 'label_values'"),
    ("x ? y", "unexpected '?'"),
    ("", "empty expression"),
    ("sum by (job", "unclosed '('"),  # a label list left open reads as the bracket it is
    ("{__name__=", "unclosed '{'"),  # cut off after the matcher: a problem, not a crash
])
def test_broken_queries_are_reported(expr: str, problem: str) -> None:
    assert any(problem in p for p in read(expr).problems), read(expr).problems


def test_grafana_variable_queries() -> None:
    assert variable_selector('label_values(vllm:num_requests_running{job=~"$job"}, model_name)') == \
        'vllm:num_requests_running{job=~"$job"}'
    assert variable_selector("label_values(job)") is None
    assert variable_selector("query_result(up)") is None


def test_vllms_own_docstring_query_misses_the_total_suffix() -> None:
    """vllm/v1/spec_decode/metrics.py (v0.19.1) documents `rate(vllm:spec_decode_num_drafts[$interval])`;
    the counter is exposed as `vllm:spec_decode_num_drafts_total`, so that query is empty."""
    documented = ("1 + (rate(vllm:spec_decode_num_accepted_tokens_total[$interval]) / "
                  "rate(vllm:spec_decode_num_drafts[$interval]))")
    assert unknown_series(metric_names(documented), load("0.19.1")) == ["vllm:spec_decode_num_drafts"]
