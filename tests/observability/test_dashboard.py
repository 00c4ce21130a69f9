"""The Grafana dashboard: loads, every query parses and names exported metrics, the rows the issue
asks for, per-stack variables, and one JSON for both backends."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from tests.fleet.fleet_stacks import fleet_spec
from tests.observability.helpers import observed_spec
from tests.paths import DOCS, FIXTURES, PROJECT_DIR
from vllm_serving.cli import main
from vllm_serving.engine.release_registry import load
from vllm_serving.observability.dashboard import ROWS as DASHBOARD_ROWS
from vllm_serving.observability.dashboard import dashboard, dashboard_json, uid, variable_selectors
from vllm_serving.observability.promql import read
from vllm_serving.observability.series import unknown_series
from vllm_serving.render.kubernetes.monitoring import dashboard_config_map
from vllm_serving.spec import ServingSpec

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
    # unset, vLLM turns it on for a generative model (default_prefix_caching, vllm/engine/arg_utils.py v0.19.1)
    unset = _rows(dashboard(observed_spec("v100", engine={"enablePrefixCaching": None})))
    assert "Prefix-cache hit rate" in unset["Load"]


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


def test_the_variables_queries_are_read_like_the_panels() -> None:
    """Each `label_values` variable's selector is checked against the release (queries.py) too."""
    assert variable_selectors(dashboard(observed_spec())) == [
        ("job", "vllm:num_requests_running"), ("model_name", 'vllm:num_requests_running{job=~"$job"}')]


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


GRAFANA_SCHEMA = json.loads((FIXTURES / "grafana" / "dashboard.schema.json").read_text(encoding="utf-8"))
"""Grafana's dashboard model (tests/fixtures/grafana/README.md says where each part comes from)."""


def _grafana_errors(model: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(GRAFANA_SCHEMA)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(model)]


@pytest.mark.parametrize("spec", [
    pytest.param(observed_spec(), id="a100-k8s"),
    pytest.param(observed_spec("v100", engine={"enablePrefixCaching": False}), id="v100"),
    pytest.param(fleet_spec(), id="fleet"),
])
def test_grafana_reads_the_dashboard_as_written(spec: ServingSpec) -> None:
    """Every key is one Grafana's model has, every value within its enums: nothing Grafana would
    drop or reset when the operator imports the file."""
    assert _grafana_errors(json.loads(dashboard_json(spec))) == []


def test_the_grafana_schema_catches_a_misspelt_key() -> None:
    """The oracle is strict where Grafana is: an unknown key of a panel, a wrong enum value."""
    model = dashboard(observed_spec())
    panel = next(p for p in model["panels"] if p["type"] == "timeseries")
    panel["fieldconfig"] = panel.pop("fieldConfig")
    panel["options"]["tooltip"]["mode"] = "multiple"
    errors = _grafana_errors(model)
    assert any("fieldconfig" in e for e in errors) and any("multiple" in e for e in errors)


def test_what_the_operator_sees_on_opening_it() -> None:
    model = dashboard(observed_spec())
    assert model["uid"] == "vllm-a100-k8s"  # the dashboard's URL: stable per stack, unlike its id
    assert model["title"] == "vLLM a100-k8s"
    assert model["description"] == "vLLM metrics of stack a100-k8s (/Qwen3.6-27B-FP8), from vllm-serving"
    assert model["time"] == {"from": "now-6h", "to": "now"} and model["refresh"] == "30s"
    assert model["timezone"] == "browser"  # the viewer's clock, as Grafana's own default
    assert model["graphTooltip"] == 1  # 1: a shared crosshair lines the panels up in time
    rows = [p for p in model["panels"] if p["type"] == "row"]
    assert rows and not any(r["collapsed"] for r in rows)  # every row open
    for panel in model["panels"]:
        if panel["type"] == "row":
            continue
        assert panel["options"]["tooltip"] == {"mode": "multi", "sort": "none"}  # every series at that time
        assert panel["fieldConfig"]["defaults"]["min"] == 0  # counts, rates and ratios start at zero
        refs = [t["refId"] for t in panel["targets"]]
        assert refs == ["A", "B", "C", "D"][:len(refs)]  # distinct per panel, as Grafana requires


# Grafana's unit ids (packages/grafana-data/src/valueFormats/categories.ts): `s` seconds, `percentunit`
# a 0.0-1.0 ratio shown as percent, `ops` operations/s, `reqps` requests/s, `short` a plain number.
UNITS = {
    "Requests running and waiting": "short", "KV-cache usage": "percentunit",  # vLLM: 1 means 100 percent
    "Prefix-cache hit rate": "percentunit", "Preemptions": "ops", "Token throughput": "short",
    "Finished requests": "reqps", "Time to first token": "s", "Inter-token latency": "s",
    "End-to-end request latency": "s", "Queue time": "s", "Draft acceptance rate": "percentunit",
    "Mean acceptance length": "short",
}


def test_each_panel_reads_in_the_unit_of_what_it_shows() -> None:
    model = dashboard(observed_spec())
    shown = {p["title"]: p["fieldConfig"]["defaults"]["unit"] for p in model["panels"] if p["type"] != "row"}
    assert shown == UNITS


# Grafana's variable enums (packages/grafana-data/src/types/templateVars.ts)
ON_DASHBOARD_LOAD, ON_TIME_RANGE_CHANGE = 1, 2
ALPHABETICAL = 1


def test_the_variables_list_what_the_chosen_time_range_has() -> None:
    variables = {v["name"]: v for v in dashboard(observed_spec())["templating"]["list"]}
    assert list(variables) == ["datasource", "job", "model_name"]
    source = variables["datasource"]
    assert (source["type"], source["query"], source["refresh"]) == ("datasource", "prometheus", ON_DASHBOARD_LOAD)
    for name in ("job", "model_name"):
        v = variables[name]
        assert v["datasource"] == {"type": "prometheus", "uid": "${datasource}"}  # the one picked above
        assert v["query"] == {"query": v["definition"], "refId": name}
        # jobs and models come and go: asked again when the time range moves, listed A-Z, shown
        assert (v["refresh"], v["sort"], v["hide"]) == (ON_TIME_RANGE_CHANGE, ALPHABETICAL, 0)
    # one job at a time (the stack's); every model of it at once, `All` matching any name (=~ ".*")
    assert (variables["job"]["includeAll"], variables["job"]["multi"], variables["job"]["allValue"]) == (
        False, False, None)
    assert (variables["model_name"]["includeAll"], variables["model_name"]["allValue"]) == (True, ".*")
    assert variables["datasource"]["label"] == "Data source" and variables["datasource"]["hide"] == 0
    assert all(v["regex"] == "" for v in variables.values())  # no value filtered out
    assert variables["model_name"]["current"] == {"text": "/Qwen3.6-27B-FP8", "value": "/Qwen3.6-27B-FP8"}


def test_the_dashboard_is_at_the_schema_version_grafana_10_4_and_11_write() -> None:
    # Grafana's DashboardMigrator upgrades a model below its own version step by step on import,
    # so the next save writes a different file than the one reviewed; 39 is the version Grafana
    # 10.4 and 11.0 export (observability/dashboard.py SCHEMA_VERSION's note)
    assert json.loads(dashboard_json(observed_spec()))["schemaVersion"] == 39


def test_the_speculative_panels_are_vllms_own_formulas() -> None:
    """vLLM's SpecDecodingProm docstring (vllm/v1/spec_decode/metrics.py, v0.19.1): the acceptance
    rate is accepted / draft tokens; the mean acceptance length, bonus token included, is
    1 + accepted tokens / drafts (the Counter `vllm:spec_decode_num_drafts` scrapes as `_total`)."""
    panels = {p["title"]: p for p in dashboard(observed_spec())["panels"]}  # a100-k8s: MTP
    sel, window = 'job=~"$job",model_name=~"$model_name"', "$__rate_interval"
    accepted = f"sum(rate(vllm:spec_decode_num_accepted_tokens_total{{{sel}}}[{window}]))"
    assert [t["expr"] for t in panels["Draft acceptance rate"]["targets"]] == [
        f"{accepted} / sum(rate(vllm:spec_decode_num_draft_tokens_total{{{sel}}}[{window}]))"]
    assert [t["expr"] for t in panels["Mean acceptance length"]["targets"]] == [
        f"1 + {accepted} / sum(rate(vllm:spec_decode_num_drafts_total{{{sel}}}[{window}]))"]
