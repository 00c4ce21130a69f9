"""Which series a stack's server exports, and the labels that tell its series from other servers'.

vLLM registers its metrics with prometheus_client (`vllm/v1/metrics/loggers.py`,
`vllm/v1/spec_decode/metrics.py` at v0.19.1), which exposes a Counter `vllm:prompt_tokens` as
`vllm:prompt_tokens_total` and a Histogram `vllm:time_to_first_token_seconds` as its `_bucket`,
`_sum` and `_count` series, never under the bare name. The release registry records each metric's
type; `Metric.series` applies those suffixes. `_created` series count as unknown: with several
API servers vLLM uses prometheus_client's multiprocess registry (`vllm/v1/metrics/prometheus.py`,
`vllm/entrypoints/cli/serve.py`), which does not export them.
"""

from __future__ import annotations

import json
from functools import cache
from urllib.parse import urlsplit

from vllm_serving.engine.release_registry import VllmRelease
from vllm_serving.fleet import is_fleet
from vllm_serving.spec import ServingSpec

SHOW_HIDDEN_FLAG = "--show-hidden-metrics-for-version"
"""Hidden (deprecated) metrics are exported only with this flag (`vllm/v1/metrics/loggers.py`)."""
PROMETHEUS_SERIES = frozenset({"up"})
"""Series Prometheus itself writes for every scrape target (the only non-vLLM names used)."""
HOST_LABEL = "host"
"""A Docker fleet's series carry the id of the host that exports them (its scrape target's label)."""


@cache  # a release is loaded once and never changes; `check` asks for each alert and query
def exported_series(release: VllmRelease, show_hidden: bool = False) -> frozenset[str]:
    """Every series name the release's server exposes on /metrics, exactly as scraped."""
    return frozenset(s for m in release.metrics.values() if show_hidden or not m.hidden for s in m.series)


def unknown_series(names: tuple[str, ...] | list[str], release: VllmRelease,
                   show_hidden: bool = False) -> list[str]:
    """The names in `names` that neither the release nor Prometheus exports, in order."""
    known = exported_series(release, show_hidden) | PROMETHEUS_SERIES
    return [name for name in dict.fromkeys(names) if name not in known]


def releases_exporting(series: str, releases: tuple[VllmRelease, ...]) -> list[str]:
    """The tags of `releases` whose server exports `series` (for a fix naming where it exists)."""
    return [r.tag for r in releases if series in exported_series(r)]


def scrape_job(spec: ServingSpec) -> str:
    """The `job` label of the server's series: on Kubernetes the Service's name (prometheus-operator's
    default for a ServiceMonitor without `jobLabel`), on a Docker host one per stack."""
    return spec.name if spec.settings.target.kind == "kubernetes" else f"vllm-{spec.stack}"


def series_labels(spec: ServingSpec) -> dict[str, str]:
    """The labels every series of this stack's server carries once scraped, and no other server's."""
    found = {"job": scrape_job(spec)}
    if spec.settings.target.kind == "kubernetes":
        found["namespace"] = spec.settings.kubernetes.namespace
    return found


def server_labels(spec: ServingSpec) -> tuple[str, ...]:
    """The labels that tell one server's series from another's beside `instance`: the job, and on
    a Docker fleet the host id (`instance` is an address; the id is what the stack names a host)."""
    return ("job", HOST_LABEL) if is_fleet(spec) else ("job",)


def matchers(labels: dict[str, str]) -> str:
    """`job="x",namespace="y"`: PromQL equality matchers (a JSON string is a valid PromQL string)."""
    return ",".join(f"{name}={json.dumps(value)}" for name, value in labels.items())


def metrics_target(spec: ServingSpec) -> tuple[str, str, str]:
    """(scheme, host:port, path) of the stack's metrics endpoint (`metricsUrl`)."""
    url = urlsplit(spec.endpoints()["metricsUrl"])
    return url.scheme, url.netloc, url.path
