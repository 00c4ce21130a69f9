"""The `vllm-serving:observability` section: metrics scraping, the alerts and the Grafana dashboard.

On Kubernetes, `prometheusOperator` and `grafanaDashboard` add prometheus-operator objects and a
dashboard ConfigMap to what the stack deploys. Any stack (Docker too) renders the same scrape
config, rule file and dashboard with `vllm-stack render STACK --format prometheus|alerts|grafana`.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from vllm_serving.settings.base import Seconds, Section, fix_error
from vllm_serving.settings.text_checks import label_pairs

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
MAX_SCRAPE_SECONDS = 75
"""The alerts' rate windows are 5 minutes; a window needs about 4 samples for `rate` to be steady."""


class ObservabilitySettings(Section):
    """Scraping, alerts and the dashboard of the stack's vLLM metrics."""

    prometheus_operator: bool = False
    """Kubernetes: deploy a ServiceMonitor and a PrometheusRule (the cluster needs prometheus-operator's CRDs)."""
    grafana_dashboard: bool = False
    """Kubernetes: deploy the dashboard as a ConfigMap labelled `grafana_dashboard: "1"` for Grafana's sidecar."""
    ttft_p95_seconds: float = Field(default=2.5, gt=0)
    """Alert when the p95 time to first token stays above this many seconds (2.5: a boundary of vLLM's histogram buckets)."""  # noqa: E501
    scrape_interval: Seconds = Field(default=15, ge=1, le=MAX_SCRAPE_SECONDS)
    """How often Prometheus scrapes /metrics, e.g. `15s` (at most 75s: the alerts rate over 5 minutes)."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Labels on the ServiceMonitor and PrometheusRule that the Prometheus's selectors match, e.g. `{release: kube-prometheus-stack}`."""  # noqa: E501
    dashboard_namespace: str | None = None
    """Namespace of the dashboard ConfigMap; the release's own when absent (Grafana's sidecar may watch only its own)."""  # noqa: E501

    @field_validator("labels")
    @classmethod
    def _label_syntax(cls, value: dict[str, str]) -> dict[str, str]:
        label_pairs(value, "observability.labels")
        return value

    @field_validator("dashboard_namespace")
    @classmethod
    def _namespace(cls, value: str | None) -> str | None:
        if value is not None and not _DNS_LABEL.fullmatch(value):
            raise fix_error(f"{value!r} is not a valid namespace name",
                            "use at most 63 lower-case letters, digits and '-', e.g. monitoring")
        return value

    @property
    def enabled(self) -> bool:
        """Whether a Kubernetes stack deploys anything for observability."""
        return self.prometheus_operator or self.grafana_dashboard
