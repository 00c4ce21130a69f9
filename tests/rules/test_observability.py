"""observability.py at its boundaries: metric names per release, Kubernetes-only switches, scraping
through the NetworkPolicy."""

from __future__ import annotations

import json

import pytest

from tests.rules.boundary import Boundary, check_boundary
from tests.stack_builders import edit, shipped_settings, spec_of
from vllm_serving import rules
from vllm_serving.engine import release_registry
from vllm_serving.engine.release_registry import VllmRelease, release_from_json
from vllm_serving.findings import Severity, config_key
from vllm_serving.observability.queries import UsedQuery
from vllm_serving.rules import observability as observability_rules
from vllm_serving.settings.kubernetes_peers import AllowFrom

OPERATOR = {"prometheus_operator": True}
DASHBOARD = {"grafana_dashboard": True}

BOUNDARIES = [
    Boundary("observability-kubernetes-only", "a100", {"observability": {"prometheus_operator": True}},
             {"observability": {"prometheus_operator": False}}, "Docker: operator on -> off",
             key=config_key("observability", "prometheusOperator"), says=("--format prometheus",)),
    Boundary("observability-kubernetes-only", "a100", {"observability": {"grafana_dashboard": True}},
             {"target": {"kind": "kubernetes"}, "observability": {"grafana_dashboard": True}},
             "dashboard: Docker -> Kubernetes", key=config_key("observability", "grafanaDashboard")),
    Boundary("observability-scrape-blocked", "a100-k8s", {"observability": OPERATOR},
             {"observability": OPERATOR, "kubernetes": {"allow_from": (AllowFrom(namespace="monitoring"),
                                                                       AllowFrom(namespace="vllm"))}},
             "default sources -> monitoring listed", says=("- namespace: monitoring", "namespace vllm")),
    Boundary("observability-scrape-blocked", "a100-k8s", {"observability": OPERATOR},
             {"observability": DASHBOARD}, "operator -> dashboard only"),
    Boundary("observability-scrape-blocked", "a100-k8s", {"observability": OPERATOR},
             {"observability": OPERATOR, "kubernetes": {"network_policy": False}}, "policy -> none"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def _without(version: str, *metrics: str) -> VllmRelease:
    """A registered release with some metrics removed, as a future release that renamed them."""
    data = json.loads((release_registry._RELEASES / f"v{version}.json").read_text(encoding="utf-8"))
    for name in metrics:
        del data["metrics"][name]
    return release_from_json(data)


def _findings(monkeypatch: pytest.MonkeyPatch, release: VllmRelease, stack: str = "a100-k8s") -> list:
    monkeypatch.setattr("vllm_serving.rules.base.release_for_tag", lambda tag: (release, None))
    return [f for f in rules.check(spec_of(shipped_settings(stack))) if f.code == "metric-unknown-in-release"]


def test_a_release_without_a_queried_metric_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    found = _findings(monkeypatch, _without("0.19.1", "vllm:kv_cache_usage_perc", "vllm:num_preemptions"))
    assert [(f.severity, f.key) for f in found] == [(Severity.ERROR, config_key("observability"))] * 2
    kv, preemptions = found
    assert "vllm:kv_cache_usage_perc" in kv.message and "dashboard panel 'KV-cache usage'" in kv.message
    assert "alert VllmKvCacheAlmostFull" in kv.message and "v0.19.1" in kv.message
    assert "vllm:num_preemptions_total" in preemptions.message  # the series, with its suffix
    assert "image.tag" in kv.fix and "v0.19.1" in kv.fix  # the releases that do export it


def test_every_registered_release_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    for version in release_registry.known_versions():
        assert _findings(monkeypatch, release_registry.load(version), "v100") == [], version


def test_a_later_metric_on_the_oldest_release(monkeypatch: pytest.MonkeyPatch) -> None:
    """A query of the per-request TPOT histogram (vLLM v0.11.0+) on a v0.10.2 stack."""
    query = UsedQuery("dashboard panel 'TPOT'",
                      'histogram_quantile(0.9, sum by (le) (rate(vllm:request_time_per_output_token_seconds_bucket'
                      '{job="x"}[5m])))')
    monkeypatch.setattr(observability_rules, "used_queries", lambda spec: [query])
    settings = edit(shipped_settings("v100"), image={"tag": "v0.10.2"})
    found = [f for f in rules.check(spec_of(settings)) if f.code == "metric-unknown-in-release"]
    assert len(found) == 1 and "v0.10.2 does not export" in found[0].message
    assert "v0.11.0" in found[0].fix
    settings = edit(shipped_settings("v100"), image={"tag": "v0.19.1"})
    assert [f for f in rules.check(spec_of(settings)) if f.code == "metric-unknown-in-release"] == []


def test_hidden_metrics_count_with_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    """vllm:gpu_cache_usage_perc is hidden in v0.11.0: exported only with --show-hidden-metrics-for-version."""
    query = UsedQuery("dashboard panel 'legacy'", "vllm:gpu_cache_usage_perc")
    monkeypatch.setattr(observability_rules, "used_queries", lambda spec: [query])
    hidden = edit(shipped_settings("v100"), image={"tag": "v0.11.0"})
    assert "metric-unknown-in-release" in {f.code for f in rules.check(spec_of(hidden))}
    shown = edit(hidden, engine={"extra_args": ("--show-hidden-metrics-for-version=0.10",)})
    assert "metric-unknown-in-release" not in {f.code for f in rules.check(spec_of(shown))}


@pytest.mark.parametrize(("count", "where"), [
    (3, "dashboard panel 'p1', dashboard panel 'p2', dashboard panel 'p3'"),
    (5, "dashboard panel 'p1', dashboard panel 'p2', dashboard panel 'p3' and 2 more"),
])
def test_the_places_of_a_missing_metric_are_the_first_three_and_a_count(
        monkeypatch: pytest.MonkeyPatch, count: int, where: str) -> None:
    """Five panels of a TPOT histogram v0.10.2 lacks (v0.11.0+): three named, the other two counted."""
    queries = [UsedQuery(f"dashboard panel 'p{n}'", "vllm:request_time_per_output_token_seconds_count")
               for n in range(1, count + 1)]
    monkeypatch.setattr(observability_rules, "used_queries", lambda spec: queries)
    settings = edit(shipped_settings("v100"), image={"tag": "v0.10.2"})
    (hit,) = [f for f in rules.check(spec_of(settings)) if f.code == "metric-unknown-in-release"]
    assert hit.message == (f"the {where} query vllm:request_time_per_output_token_seconds_count, which vLLM v0.10.2 "
                           "does not export: an empty panel or an alert that never fires")
