"""The Grafana dashboard: loads, every query parses and names exported metrics, the rows the issue
asks for, per-stack variables, and one JSON for both backends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.observability.helpers import observed_spec
from tests.paths import DOCS, PROJECT_DIR
from vllm_serving.cli import main
from vllm_serving.engine.release_registry import load
from vllm_serving.observability.dashboard import ROWS as DASHBOARD_ROWS
from vllm_serving.observability.dashboard import dashboard, dashboard_json, uid, variable_selectors
from vllm_serving.observability.promql import read
from vllm_serving.observability.series import unknown_series
from vllm_serving.render.kubernetes.monitoring import dashboard_config_map

ROWS = {
    "Load": ["Requests running and waiting", "KV-cache usage", "Prefix-cache hit rate", "Preemptions"],
    "Throughput": ["Token throughput", "Finished requests"],
    "Latency": ["Time to first token", "Inter-token latency", "End-to-end request latency", "Queue time"],
    "Speculative decoding": ["Draft acceptance rate", "Mean acceptance length"],
}


def _rows(model: dict[str, Any]) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for panel in model["panels"]:
        if panel["type"] == "row":
            current = rows.setdefault(panel["title"], [])
        else:
            current.append(panel["title"])
    return rows


def _targets(model: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for p in model["panels"] for t in p.get("targets", [])]


@pytest.mark.parametrize("stack", ["a100-k8s", "a100", "v100"])
def test_every_query_parses_and_names_exported_metrics(stack: str) -> None:
    model = json.loads(dashboard_json(observed_spec(stack)))
    exprs = [t["expr"] for t in _targets(model)] + [s for _, s in variable_selectors(model)]
    assert len(exprs) > 20
    for expr in exprs:
        reading = read(expr)
        assert reading.problems == (), expr
        assert reading.metrics and unknown_series(reading.metrics, load("0.19.1")) == [], expr


def test_rows_and_panels() -> None:
    """a100-k8s runs MTP speculative decoding with prefix caching: every row."""
    assert _rows(dashboard(observed_spec())) == ROWS


def test_rows_follow_the_engine() -> None:
    """No speculative config (v100): no acceptance row; prefix caching off: no hit-rate panel."""
    rows = _rows(dashboard(observed_spec("v100", engine={"enablePrefixCaching": False})))
    assert "Speculative decoding" not in rows
    assert rows["Load"] == ["Requests running and waiting", "KV-cache usage", "Preemptions"]


def test_latency_panels_read_the_histograms() -> None:
    model = dashboard(observed_spec())
    ttft = next(p for p in model["panels"] if p["title"] == "Time to first token")
    exprs = [t["expr"] for t in ttft["targets"]]
    assert [t["legendFormat"] for t in ttft["targets"]] == ["p50", "p90", "p99", "mean"]
    assert all("rate(vllm:time_to_first_token_seconds_bucket{" in e and "sum by (le)" in e for e in exprs[:3])
    assert exprs[0].startswith("histogram_quantile(0.5, ")
    assert "_sum{" in exprs[3] and "_count{" in exprs[3]


def test_variables_default_to_the_stack() -> None:
    spec = observed_spec()
    variables = {v["name"]: v for v in dashboard(spec)["templating"]["list"]}
    assert variables["job"]["current"]["value"] == "vllm"  # the Service's name: the ServiceMonitor's job
    assert variables["model_name"]["current"]["value"] == spec.served_model_name
    docker = {v["name"]: v for v in dashboard(observed_spec("v100"))["templating"]["list"]}
    assert docker["job"]["current"]["value"] == "vllm-v100"  # the scrape config's job_name
    for target in _targets(dashboard(spec)):
        assert 'job=~"$job",model_name=~"$model_name"' in target["expr"]
        assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}


def test_panels_do_not_overlap_and_ids_are_unique() -> None:
    panels = dashboard(observed_spec())["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    cells = set()
    for p in panels:
        g = p["gridPos"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, p["title"]
        cells |= mine
        assert g["x"] + g["w"] <= 24


def test_uid_fits_grafana() -> None:
    assert uid("a100-k8s") == "vllm-a100-k8s"
    long = uid("x" * 60)
    assert len(long) <= 40 and long != uid("x" * 61)
    assert uid("v100.prod") == "vllm-v100-prod"


def test_one_json_for_both_backends(capsys: pytest.CaptureFixture[str]) -> None:
    """`render --format grafana` prints what the Kubernetes ConfigMap carries."""
    assert main(["--project-dir", str(PROJECT_DIR), "render", "a100-k8s", "--format", "grafana"]) == 0
    printed = capsys.readouterr().out
    config_map = dashboard_config_map(observed_spec())
    assert config_map is not None
    assert list(config_map["data"].values()) == [printed]
    assert json.loads(printed)["title"] == "vLLM a100-k8s"


def test_the_docs_describe_every_row() -> None:
    """docs/observability.md names each row of the dashboard, in order."""
    section = (DOCS / "observability.md").read_text(encoding="utf-8")
    titles = [row.title for row in DASHBOARD_ROWS]
    named = [title for title in titles if f"- **{title}**" in section]
    assert named == titles
    assert [section.index(f"- **{t}**") for t in named] == sorted(section.index(f"- **{t}**") for t in named)
