"""The Grafana dashboard of a stack: one JSON model, printed by `render --format grafana` and
carried by the Kubernetes ConfigMap, so both backends get the same panels.

The rows and panels are data (`ROWS`); a panel's queries are PromQL templates over `%sel` (the
dashboard's `job` and `model_name` variables, and on a Docker fleet `host`, whose "All" sums the
fleet and whose values pick hosts) and `%window` (Grafana's `$__rate_interval`). Every
metric name comes from vLLM's `vllm/v1/metrics/loggers.py` and `vllm/v1/spec_decode/metrics.py`
(v0.19.1); `rules/observability.py` checks them against the stack's release.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import msgspec

from vllm_serving.fleet import is_fleet
from vllm_serving.observability.promql import variable_selector
from vllm_serving.observability.series import HOST_LABEL, scrape_job
from vllm_serving.observability.template import fill, histogram_mean, histogram_quantile
from vllm_serving.spec import ServingSpec

SCHEMA_VERSION = 39  # Grafana 10.4/11's dashboard model
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
SELECTION = 'job=~"$job",model_name=~"$model_name"'
FLEET_SELECTION = f'job=~"$job",{HOST_LABEL}=~"${HOST_LABEL}",model_name=~"$model_name"'
WINDOW = "$__rate_interval"
PERCENTILES = (0.5, 0.9, 0.99)
VARIABLE_METRIC = "vllm:num_requests_running"
"""A gauge every server exports from start-up, whose labels the variables list."""


class Query(msgspec.Struct, frozen=True):
    expr: str
    """PromQL template over %sel and %window."""
    legend: str


class Panel(msgspec.Struct, frozen=True):
    title: str
    description: str
    unit: str
    """Grafana's unit id: short, percentunit, s, ..."""
    queries: tuple[Query, ...]
    needs: str | None = None
    """A condition of `CONDITIONS` the stack must meet for the panel to be shown."""


class Row(msgspec.Struct, frozen=True):
    title: str
    panels: tuple[Panel, ...]
    needs: str | None = None


CONDITIONS: dict[str, Callable[[ServingSpec], bool]] = {
    "speculative": lambda spec: spec.settings.engine.speculative_config is not None,
    # on by default in vLLM's V1 engine; only `enablePrefixCaching: false` turns it off
    "prefix_caching": lambda spec: spec.settings.engine.enable_prefix_caching is not False,
}


def latency(title: str, description: str, histogram: str) -> Panel:
    """Percentiles and the mean of a latency histogram."""
    queries = [Query(histogram_quantile(q, histogram), f"p{q * 100:g}") for q in PERCENTILES]
    return Panel(title, description, "s", (*queries, Query(histogram_mean(histogram), "mean")))


ROWS: tuple[Row, ...] = (
    Row("Load", (
        Panel("Requests running and waiting",
              "Requests in the running batch, and requests queued for a slot (engine.maxNumSeqs) or KV blocks.",
              "short", (Query("sum(vllm:num_requests_running{%sel})", "running"),
                        Query("sum(vllm:num_requests_waiting{%sel})", "waiting"))),
        Panel("KV-cache usage",
              "Share of the KV-cache blocks in use, per engine; near 100%% new requests wait and running ones "
              "are preempted.",
              "percentunit", (Query("max by (instance, engine) (vllm:kv_cache_usage_perc{%sel})",
                                    "{{instance}} engine {{engine}}"),)),
        Panel("Prefix-cache hit rate",
              "Share of prompt tokens found in the prefix cache (hits / queries, both counted in tokens).",
              "percentunit", (Query("sum(rate(vllm:prefix_cache_hits_total{%sel}[%window])) / "
                                    "sum(rate(vllm:prefix_cache_queries_total{%sel}[%window]))", "hit rate"),),
              needs="prefix_caching"),
        Panel("Preemptions",
              "Requests evicted from the KV cache to make room, per second; each is recomputed later.",
              "ops", (Query("sum(rate(vllm:num_preemptions_total{%sel}[%window]))", "preemptions/s"),)),
    )),
    Row("Throughput", (
        Panel("Token throughput", "Prompt tokens processed (prefill) and tokens generated (decode), per second.",
              "short", (Query("sum(rate(vllm:prompt_tokens_total{%sel}[%window]))", "prompt tokens/s"),
                        Query("sum(rate(vllm:generation_tokens_total{%sel}[%window]))", "generation tokens/s"))),
        Panel("Finished requests", "Requests finished per second, by reason (stop, length, abort, error).",
              "reqps", (Query("sum by (finished_reason) (rate(vllm:request_success_total{%sel}[%window]))",
                              "{{finished_reason}}"),)),
    )),
    Row("Latency", (
        latency("Time to first token", "From arrival to the first output token: queueing plus prefill.",
                "vllm:time_to_first_token_seconds"),
        latency("Inter-token latency", "Time between two output tokens of a request (decode).",
                "vllm:inter_token_latency_seconds"),
        latency("End-to-end request latency", "From arrival to the last token.",
                "vllm:e2e_request_latency_seconds"),
        latency("Queue time", "Time a request waited before it was scheduled.",
                "vllm:request_queue_time_seconds"),
    )),
    Row("Speculative decoding", (
        Panel("Draft acceptance rate", "Share of the drafted tokens the target model accepted.",
              "percentunit", (Query("sum(rate(vllm:spec_decode_num_accepted_tokens_total{%sel}[%window])) / "
                                    "sum(rate(vllm:spec_decode_num_draft_tokens_total{%sel}[%window]))",
                                    "acceptance rate"),)),
        Panel("Mean acceptance length", "Tokens produced per verification step: 1 + accepted drafts per draft.",
              "short", (Query("1 + sum(rate(vllm:spec_decode_num_accepted_tokens_total{%sel}[%window])) / "
                              "sum(rate(vllm:spec_decode_num_drafts_total{%sel}[%window]))", "tokens per step"),)),
    ), needs="speculative"),
)


def shown(spec: ServingSpec) -> list[tuple[Row, list[Panel]]]:
    """The rows and panels this stack's dashboard has (rows left empty are dropped)."""
    def met(needs: str | None) -> bool:
        return needs is None or CONDITIONS[needs](spec)

    found = [(row, [p for p in row.panels if met(p.needs)]) for row in ROWS if met(row.needs)]
    return [(row, panels) for row, panels in found if panels]


def selection(spec: ServingSpec) -> str:
    """The label matchers of every panel query: the dashboard's variables."""
    return FLEET_SELECTION if is_fleet(spec) else SELECTION


def panel_expr(template: str, selected: str = SELECTION) -> str:
    """A query as the dashboard holds it."""
    return fill(template, sel=selected, window=WINDOW)


def variables(spec: ServingSpec) -> list[dict[str, Any]]:
    """Data source, then the stack's `job` and served model, each defaulting to this stack (and a
    fleet's `host`, defaulting to all of them)."""
    job = scrape_job(spec)

    def query(name: str, definition: str, current: str, include_all: bool, multi: bool = False) -> dict[str, Any]:
        value = "$__all" if current == "All" else current
        return {"name": name, "label": name, "type": "query", "datasource": DATASOURCE,
                "definition": definition, "query": {"query": definition, "refId": name},
                "current": {"text": current, "value": value}, "includeAll": include_all,
                "allValue": ".*" if include_all else None, "multi": multi, "refresh": 2, "sort": 1,
                "hide": 0, "options": [], "regex": ""}

    hosts = [query(HOST_LABEL, f'label_values({VARIABLE_METRIC}{{job=~"$job"}}, {HOST_LABEL})', "All", True,
                   multi=True)] if is_fleet(spec) else []
    return [
        {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
         "current": {}, "hide": 0, "options": [], "refresh": 1, "regex": ""},
        query("job", f"label_values({VARIABLE_METRIC}, job)", job, False),
        *hosts,
        query("model_name", f'label_values({VARIABLE_METRIC}{{job=~"$job"}}, model_name)',
              spec.served_model_name, True),
    ]


def variable_selectors(dashboard_model: dict[str, Any]) -> list[tuple[str, str]]:
    """(variable, PromQL selector) of every `label_values` variable of a dashboard model."""
    found = []
    for variable in dashboard_model["templating"]["list"]:
        if variable["type"] == "query":
            selector = variable_selector(variable["query"]["query"])
            if selector is not None:
                found.append((variable["name"], selector))
    return found


def _panel(panel: Panel, panel_id: int, x: int, y: int, selected: str) -> dict[str, Any]:
    targets = [{"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": panel_expr(q.expr, selected),
                "legendFormat": q.legend, "range": True} for i, q in enumerate(panel.queries)]
    return {"id": panel_id, "type": "timeseries", "title": panel.title, "description": fill(panel.description),
            "datasource": DATASOURCE, "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
            "fieldConfig": {"defaults": {"unit": panel.unit, "min": 0}, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                        "tooltip": {"mode": "multi", "sort": "none"}},
            "targets": targets}


def uid(stack: str) -> str:
    """Grafana's uid: at most 40 of letters, digits, '-' and '_'; stable per stack."""
    text = re.sub(r"[^A-Za-z0-9_-]", "-", f"vllm-{stack}")
    if len(text) <= 40:
        return text
    return f"{text[:31]}-{hashlib.sha256(stack.encode()).hexdigest()[:8]}"


def dashboard(spec: ServingSpec) -> dict[str, Any]:
    """The dashboard model (Grafana's JSON), rows in `ROWS` order, two panels side by side."""
    panels: list[dict[str, Any]] = []
    y = 0
    for row, row_panels in shown(spec):
        panels.append({"id": len(panels) + 1, "type": "row", "title": row.title, "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        y += 1
        for i, panel in enumerate(row_panels):
            panels.append(_panel(panel, len(panels) + 1, 12 * (i % 2), y + 8 * (i // 2), selection(spec)))
        y += 8 * ((len(row_panels) + 1) // 2)
    return {
        "uid": uid(spec.stack), "title": f"vLLM {spec.stack}",
        "description": f"vLLM metrics of stack {spec.stack} ({spec.served_model_name}), from vllm-serving",
        "tags": ["vllm", "vllm-serving"], "editable": True, "timezone": "browser", "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"}, "schemaVersion": SCHEMA_VERSION, "version": 1,
        "graphTooltip": 1, "annotations": {"list": []}, "links": [],
        "templating": {"list": variables(spec)}, "panels": panels,
    }


def dashboard_json(spec: ServingSpec) -> str:
    """The dashboard as Grafana imports it (Dashboards > New > Import, or a provisioning file)."""
    return json.dumps(dashboard(spec), indent=2) + "\n"
