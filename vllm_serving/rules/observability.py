"""The dashboard and alerts query only what the stack's vLLM release exports; the Kubernetes-only
switches are not set on a Docker stack; Prometheus can reach /metrics through the NetworkPolicy.

A metric vLLM renamed or removed is a silent empty panel or an alert that never fires (vLLM
production-stack's dashboard still queries `vllm:gpu_cache_usage_perc`, hidden since v0.11 and
gone since). The names come from the release registry, read out of each release's
`vllm/v1/metrics/` source, with prometheus_client's suffixes (`observability/series.py`).
"""

from __future__ import annotations

from vllm_serving.engine.release_registry import known_versions, load
from vllm_serving.findings import Severity, config_key
from vllm_serving.observability.queries import used_queries
from vllm_serving.observability.series import SHOW_HIDDEN_FLAG, releases_exporting, unknown_series
from vllm_serving.rules.base import KEY, Context, Facts, Rule

LOGGERS = "vllm/v1/metrics/loggers.py PrometheusStatLogger; vllm/v1/spec_decode/metrics.py SpecDecodingProm"
MAX_PLACES = 3


def _unknown_metrics(ctx: Context) -> list[Facts] | None:
    show_hidden = bool(ctx.extra_values(SHOW_HIDDEN_FLAG))
    places: dict[str, list[str]] = {}
    for query in used_queries(ctx.spec):
        for series in unknown_series(query.metrics, ctx.release, show_hidden):
            places.setdefault(series, []).append(query.where)
    if not places:
        return None
    releases = tuple(load(v) for v in known_versions())
    return [{"series": series, "release": ctx.release.tag,
             "where": ", ".join(where[:MAX_PLACES]) + (f" and {len(where) - MAX_PLACES} more"
                                                        if len(where) > MAX_PLACES else ""),
             "exporting": ", ".join(releases_exporting(series, releases)) or "no release with a registry"}
            for series, where in places.items()]


def _kubernetes_only(ctx: Context) -> Facts | None:
    o = ctx.settings.observability
    if ctx.settings.target.kind == "kubernetes" or not o.enabled:
        return None
    key = "prometheusOperator" if o.prometheus_operator else "grafanaDashboard"
    return {KEY: config_key("observability", key), "switch": key, "stack": ctx.spec.stack}


def _scrape_blocked(ctx: Context) -> Facts | None:
    k = ctx.settings.kubernetes
    if ctx.settings.target.kind != "kubernetes" or not ctx.settings.observability.prometheus_operator:
        return None
    if not k.network_policy or k.allow_from is not None:
        return None
    return {"namespace": k.namespace}


RULES: tuple[Rule, ...] = (
    Rule("metric-unknown-in-release", Severity.ERROR, config_key("observability"),
         "the {where} query {series}, which vLLM {release} does not export: an empty panel or an alert "
         "that never fires",
         "run an image.tag whose release exports it ({exporting}), or change vllm_serving/observability "
         "to {release}'s metric names (vllm-stack render STACK --format grafana|alerts shows the queries)",
         "Every metric name in the dashboard and the alerts is one the image's vLLM release exports, with "
         "prometheus_client's suffixes (a counter as `_total`, a histogram as `_bucket`/`_sum`/`_count`).",
         "A renamed or removed metric leaves a panel empty and an alert silent, with no error anywhere.",
         f"{LOGGERS}; the release registry (vllm_serving/engine/releases)", _unknown_metrics),
    Rule("observability-kubernetes-only", Severity.WARNING, config_key("observability"),
         "observability.{switch} deploys prometheus-operator and Grafana objects on Kubernetes only; "
         "this Docker stack deploys nothing for it",
         "remove it, and give your Prometheus and Grafana the outputs of vllm-stack render {stack} "
         "--format prometheus, --format alerts and --format grafana",
         "Docker stack with observability.prometheusOperator or observability.grafanaDashboard.",
         "The switch would suggest the server is scraped and alerted on when nothing was set up.",
         "vllm_serving/render/kubernetes/monitoring.py", _kubernetes_only),
    Rule("observability-scrape-blocked", Severity.WARNING, config_key("kubernetes", "allowFrom"),
         "the NetworkPolicy admits only the pods of namespace {namespace}: a Prometheus in another "
         "namespace cannot scrape /metrics, and the ServiceMonitor's target stays down",
         "list Prometheus's namespace in kubernetes.allowFrom (e.g. - namespace: monitoring) next to the "
         "clients' (- namespace: {namespace})",
         "Kubernetes: observability.prometheusOperator with the default NetworkPolicy sources.",
         "The NetworkPolicy admits the API port (which serves /metrics) to the release's namespace only.",
         "vllm_serving/render/kubernetes/network_policy.py; prometheus-operator ServiceMonitor",
         _scrape_blocked),
)
