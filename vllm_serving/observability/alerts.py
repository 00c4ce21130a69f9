"""The alert rules of a stack: one Prometheus rule group, printed by `render --format alerts` and
carried by the Kubernetes PrometheusRule.

Each alert is data (`ALERTS`): a PromQL template over `%sel` (the labels of this stack's series,
`series.series_labels`), `%server` (the labels that tell its servers apart: the job, and a Docker
fleet's host, so each alert fires per host), `%ttft` (`observability.ttftP95Seconds`) and `%down`
(how long a restart may take before the server counts as down: the model load, plus the image
pull on a Kubernetes node). Metric names from `vllm/v1/metrics/loggers.py` (v0.19.1).
"""

from __future__ import annotations

import math
from typing import Any

import msgspec
import yaml

from vllm_serving import timing
from vllm_serving.observability.series import matchers, series_labels, server_labels
from vllm_serving.observability.template import fill
from vllm_serving.spec import ServingSpec

KV_CACHE_FULL = 0.9
WINDOW = "5m"


class Alert(msgspec.Struct, frozen=True):
    name: str
    expr: str
    """PromQL template over %sel, %window, %ttft."""
    for_: str
    """How long the condition holds before the alert fires; a template too (%down)."""
    severity: str
    summary: str
    description: str
    """Prometheus's alert template language: {{ $labels.instance }}, {{ $value }}."""


ALERTS: tuple[Alert, ...] = (
    Alert("VllmKvCacheAlmostFull",
          f"max by (%server, instance, engine) (vllm:kv_cache_usage_perc{{%sel}}) > {KV_CACHE_FULL:g}",
          "10m", "warning",
          f"vLLM KV cache over {KV_CACHE_FULL * 100:g}%% full for 10 minutes",
          "{{ $labels.instance }} engine {{ $labels.engine }}: {{ $value | humanizePercentage }} of the KV cache "
          "in use. New requests wait and running ones get preempted: lower engine.maxNumSeqs or "
          "engine.maxModelLen, raise engine.gpuMemoryUtilization, or add servers."),
    Alert("VllmRequestsQueueing",
          "sum by (%server, instance) (deriv(vllm:num_requests_waiting{%sel}[%window])) > 0 "
          "and sum by (%server, instance) (vllm:num_requests_waiting{%sel}) > 0", "5m", "warning",
          "vLLM waiting requests growing for 5 minutes",
          "{{ $labels.instance }}: the queue of waiting requests keeps growing; the server takes in more "
          "than it finishes. Add servers, or lower the load."),
    Alert("VllmPreempting",
          "sum by (%server, instance) (rate(vllm:num_preemptions_total{%sel}[%window])) > 0", "5m", "warning",
          "vLLM preempting requests for 5 minutes",
          "{{ $labels.instance }}: {{ $value | humanize }} preemptions/s. The KV cache cannot hold the running "
          "batch, so requests are evicted and recomputed: lower engine.maxNumSeqs or raise "
          "engine.gpuMemoryUtilization."),
    Alert("VllmTimeToFirstTokenHigh",
          "histogram_quantile(0.95, sum by (%server, le) "
          "(rate(vllm:time_to_first_token_seconds_bucket{%sel}[%window]))) > %ttft", "10m", "warning",
          "vLLM p95 time to first token above %ttft s for 10 minutes",
          "%who: p95 time to first token {{ $value | humanizeDuration }}, above "
          "observability.ttftP95Seconds (%ttft s)."),
    Alert("VllmServerDown", "up{%sel} == 0", "%down", "critical",
          "vLLM server down for longer than a restart takes",
          "{{ $labels.instance }}: /metrics has not answered for %down, longer than loading the model "
          "takes. Read the server's log (the stack output logsCommand)."),
    Alert("VllmServerAbsent", "absent(up{%sel})", "%down", "critical",
          "vLLM server not scraped",
          "Prometheus has no target for {{ $labels.job }}: the server is gone, or the scrape "
          "configuration (ServiceMonitor, scrape_configs) selects nothing."),
)


def down_for(spec: ServingSpec) -> str:
    """How long the server may be unreachable while it restarts: the model load, plus the image
    pull on a new Kubernetes node (a Docker host pulls before it replaces the container)."""
    seconds = spec.startup_seconds
    if spec.settings.target.kind == "kubernetes":
        seconds = timing.rollout_seconds(seconds)
    return f"{math.ceil(seconds / 60)}m"


def _values(spec: ServingSpec) -> dict[str, str]:
    server = server_labels(spec)
    # a per-server alert's subject: the job, then `host gpu01` on a fleet
    who = " ".join(["{{ $labels.job }}", *(f"{label} {{{{ $labels.{label} }}}}" for label in server[1:])])
    return {"sel": matchers(series_labels(spec)), "server": ", ".join(server), "who": who, "window": WINDOW,
            "ttft": f"{spec.settings.observability.ttft_p95_seconds:g}", "down": down_for(spec)}


def group_name(spec: ServingSpec) -> str:
    return f"vllm-{spec.stack}"


def rule_groups(spec: ServingSpec) -> dict[str, Any]:
    """The rule file's content (also the PrometheusRule's spec): one group for this stack."""
    values = _values(spec)
    rules = [{"alert": a.name, "expr": fill(a.expr, **values), "for": fill(a.for_, **values),
              "labels": {"severity": a.severity, "stack": spec.stack},
              "annotations": {"summary": fill(a.summary, **values), "description": fill(a.description, **values)}}
             for a in ALERTS]
    return {"groups": [{"name": group_name(spec), "rules": rules}]}


def rules_yaml(spec: ServingSpec) -> str:
    """The rule file Prometheus loads from `rule_files:`."""
    header = (f"# Alert rules for the vLLM server of stack {spec.stack}: add this file under rule_files: in\n"
              f"# prometheus.yml (the scrape config: vllm-stack render {spec.stack} --format prometheus).\n")
    return header + yaml.safe_dump(rule_groups(spec), sort_keys=False, width=120)
