"""The observability objects of a Kubernetes stack: a ServiceMonitor and a PrometheusRule
(prometheus-operator's `monitoring.coreos.com/v1`) with `observability.prometheusOperator`, and the
Grafana dashboard as a ConfigMap for Grafana's sidecar with `observability.grafanaDashboard`.

The ServiceMonitor selects the stack's Service by its labels and scrapes its `http` port at
/metrics; vLLM serves /metrics without the API key (it checks only /v1 paths), so it carries no
credentials. The rule group and the dashboard are those `render --format alerts|grafana` print.
"""

from __future__ import annotations

from vllm_serving.observability.alerts import rule_groups
from vllm_serving.observability.dashboard import dashboard_json
from vllm_serving.render.kubernetes.parts import Obj, labels, object_meta
from vllm_serving.spec import ServingSpec

API_VERSION = "monitoring.coreos.com/v1"
CRD_NAMES = ("servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com")
INSTALL_HINT = (
    "install prometheus-operator with Prometheus, e.g. the kube-prometheus-stack Helm chart "
    "(helm repo add prometheus-community https://prometheus-community.github.io/helm-charts && helm install "
    "kube-prometheus-stack prometheus-community/kube-prometheus-stack -n monitoring --create-namespace), "
    "or only its CRDs: kubectl apply --server-side -f "
    "https://github.com/prometheus-operator/prometheus-operator/releases/download/v0.93.0/stripped-down-crds.yaml; "
    "or set observability.prometheusOperator: false")
DASHBOARD_LABEL = {"grafana_dashboard": "1"}
"""The label Grafana's dashboard sidecar looks for (the grafana and kube-prometheus-stack charts' default)."""
SERVED_BY = "inference-server"
"""The component label of the Service the ServiceMonitor selects."""


def _meta(spec: ServingSpec, name: str) -> Obj:
    meta = object_meta(spec, name, "monitoring")
    meta["labels"] = {**meta["labels"], **spec.settings.observability.labels}
    return meta


def service_monitor(spec: ServingSpec) -> Obj | None:
    if not spec.settings.observability.prometheus_operator:
        return None
    service_labels = labels(spec, SERVED_BY)
    # the version label changes on every upgrade; the others name this stack's Service alone
    selected = {k: v for k, v in service_labels.items() if k != "app.kubernetes.io/version"}
    endpoint = {"port": "http", "path": "/metrics", "scheme": "http",
                "interval": f"{spec.settings.observability.scrape_interval}s"}
    return {"apiVersion": API_VERSION, "kind": "ServiceMonitor", "metadata": _meta(spec, spec.name),
            "spec": {"selector": {"matchLabels": selected},
                     "namespaceSelector": {"matchNames": [spec.settings.kubernetes.namespace]},
                     "endpoints": [endpoint]}}


def prometheus_rule(spec: ServingSpec) -> Obj | None:
    if not spec.settings.observability.prometheus_operator:
        return None
    return {"apiVersion": API_VERSION, "kind": "PrometheusRule", "metadata": _meta(spec, spec.name),
            "spec": rule_groups(spec)}


def dashboard_config_map(spec: ServingSpec) -> Obj | None:
    o = spec.settings.observability
    if not o.grafana_dashboard:
        return None
    meta = object_meta(spec, f"{spec.name}-dashboard", "monitoring")
    meta["namespace"] = o.dashboard_namespace or spec.settings.kubernetes.namespace
    meta["labels"] = {**meta["labels"], **DASHBOARD_LABEL}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
            "data": {f"vllm-{spec.stack}.json": dashboard_json(spec)}}


def monitoring_objects(spec: ServingSpec) -> list[Obj]:
    """The ServiceMonitor, PrometheusRule and dashboard ConfigMap the stack turns on, in that order."""
    if spec.settings.target.kind != "kubernetes":
        return []
    found = (service_monitor(spec), prometheus_rule(spec), dashboard_config_map(spec))
    return [o for o in found if o is not None]
