"""The alert rules as the operator reads and routes them: which alert, how urgent, after how long,
for which stack; the figures worked out by hand. (tests/observability/test_promtool.py checks that
each fires on trouble only.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.observability.helpers import SEVERITY, observed_spec
from vllm_serving.observability.alerts import rule_groups, rules_yaml


def _rules(stack: str, **sections: Any) -> dict[str, dict[str, Any]]:
    (group,) = rule_groups(observed_spec(stack, **sections))["groups"]
    assert group["name"] == f"vllm-{stack}"  # one group per stack: two stacks' files load side by side
    return {rule["alert"]: rule for rule in group["rules"]}


def test_each_alert_has_its_severity_and_the_stack() -> None:
    rules = _rules("v100")
    assert {name: r["labels"] for name, r in rules.items()} == {
        name: {"severity": severity, "stack": "v100"} for name, severity in SEVERITY.items()}
    for rule in rules.values():
        assert set(rule["annotations"]) == {"summary", "description"}  # what Alertmanager templates show


@pytest.mark.parametrize(("stack", "down"), [
    # Docker: the model load alone (the host pulls the image before it replaces the container);
    # Qwen3.5-27B, 50.99 GiB per tensor (vision tower included): 300 + 15 x 50.99 = 1065 s -> 18 min
    ("v100", "18m"),
    # Kubernetes: the load plus a fresh node pulling the image; Qwen3.6-27B-FP8, 30.73 GiB:
    # 300 + 15 x 30.73 = 761 s -> 13 min = 780 s, + 900 s = 1680 s = 28 min
    ("a100-k8s", "28m"),
])
def test_a_server_is_down_only_after_a_restart_could_have_finished(stack: str, down: str) -> None:
    rules = _rules(stack)
    assert rules["VllmServerDown"]["for"] == rules["VllmServerAbsent"]["for"] == down
    assert f"has not answered for {down}," in rules["VllmServerDown"]["annotations"]["description"]


@pytest.mark.parametrize(("stack", "down"), [
    # container.startupTimeout: 1000s is 16 min 40 s; a rule that fired after 16 min would page
    # while the server is still loading, so the minutes round up: 17m
    ("v100", "17m"),
    # Kubernetes adds the image pull on a fresh node: 1000 + 900 = 1900 s = 31 min 40 s -> 32m
    ("a100-k8s", "32m"),
])
def test_a_start_period_in_odd_seconds_is_rounded_up_to_whole_minutes(stack: str, down: str) -> None:
    rules = _rules(stack, container={"startupTimeout": "1000s"})
    assert rules["VllmServerDown"]["for"] == rules["VllmServerAbsent"]["for"] == down


def test_the_other_alerts_wait_their_own_minutes() -> None:
    rules = _rules("v100")
    assert {name: rules[name]["for"] for name in SEVERITY if not name.startswith("VllmServer")} == {
        "VllmKvCacheAlmostFull": "10m", "VllmRequestsQueueing": "5m", "VllmPreempting": "5m",
        "VllmTimeToFirstTokenHigh": "10m"}


def test_the_expressions_select_this_stacks_series_only() -> None:
    docker, kubernetes = _rules("v100"), _rules("a100-k8s")
    assert docker["VllmServerDown"]["expr"] == 'up{job="vllm-v100"} == 0'
    assert docker["VllmKvCacheAlmostFull"]["expr"] == (
        'max by (job, instance, engine) (vllm:kv_cache_usage_perc{job="vllm-v100"}) > 0.9')
    # rates over 5 minutes: about 20 samples at the default 15 s scrape interval
    assert docker["VllmPreempting"]["expr"] == (
        'sum by (job, instance) (rate(vllm:num_preemptions_total{job="vllm-v100"}[5m])) > 0')
    # the Service's name is the job on Kubernetes; the namespace tells two clusters' stacks apart
    assert kubernetes["VllmServerAbsent"]["expr"] == 'absent(up{job="vllm",namespace="vllm"})'


def test_the_ttft_threshold_is_the_stacks_own() -> None:
    rules = _rules("v100", observability={"ttftP95Seconds": 0.75})
    ttft = rules["VllmTimeToFirstTokenHigh"]
    assert ttft["expr"].endswith(") > 0.75")
    # the key says p95: the 0.95 quantile of vLLM's TTFT histogram over 5 minutes, per server
    assert ttft["expr"] == ('histogram_quantile(0.95, sum by (job, le) '
                            '(rate(vllm:time_to_first_token_seconds_bucket{job="vllm-v100"}[5m]))) > 0.75')
    assert ttft["annotations"]["summary"] == "vLLM p95 time to first token above 0.75 s for 10 minutes"
    assert ttft["annotations"]["description"].startswith("{{ $labels.job }}: p95")


def test_the_rule_file_says_where_it_goes() -> None:
    text = rules_yaml(observed_spec("v100"))
    assert text.startswith("# Alert rules for the vLLM server of stack v100: add this file under rule_files:")
    assert "vllm-stack render v100 --format prometheus" in text.splitlines()[1]
