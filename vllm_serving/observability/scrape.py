"""The Prometheus scrape config of a stack (`render --format prometheus`): one static target, the
stack's metrics endpoint (`metricsUrl`), under the `job` (and, for a Kubernetes stack, the
`namespace`) label the alerts and the dashboard select. A Docker fleet (`target.hosts`) has one
target per host, each labelled with the host's id (`host`), by which the alerts fire per host
and the dashboard picks one.

The API key: vLLM v0.19.1 checks it only on paths that start with /v1 (`AuthenticationMiddleware`,
vllm/entrypoints/openai/server_utils.py), so /metrics answers without it. When the stack sets a
key, the job still names a bearer-token file (never the key itself), as an authenticating proxy
in front of the server (`network.behindProxy`) may ask for it on every path; against vLLM alone
it is harmless. The operator fills the file.
"""

from __future__ import annotations

from typing import Any

import yaml

from vllm_serving.fleet import fleet_hosts
from vllm_serving.observability.series import HOST_LABEL, metrics_target, scrape_job, series_labels
from vllm_serving.spec import ServingSpec

TOKEN_DIRECTORY = "/etc/prometheus/secrets"


def token_file(spec: ServingSpec) -> str | None:
    """Where Prometheus reads the bearer token, when the stack sets an API key."""
    if "apiKey" not in spec.settings.secrets_set:
        return None
    return f"{TOKEN_DIRECTORY}/{scrape_job(spec)}-api-key"


def static_configs(spec: ServingSpec) -> list[dict[str, Any]]:
    """The job's targets: the server's metrics endpoint, or each fleet host's with its `host` label."""
    extra = {k: v for k, v in series_labels(spec).items() if k != "job"}
    servers = [(h.spec, {HOST_LABEL: h.id}) for h in fleet_hosts(spec)] or [(spec, {})]
    found = []
    for server, own in servers:
        static: dict[str, Any] = {"targets": [metrics_target(server)[1]]}
        if extra or own:
            static["labels"] = {**extra, **own}
        found.append(static)
    return found


def scrape_config(spec: ServingSpec) -> dict[str, Any]:
    """A prometheus.yml holding the stack's scrape job (merge its entry into yours)."""
    # scheme and path are the same on every host of a fleet: one server, several places
    scheme, _, path = metrics_target(spec)
    job: dict[str, Any] = {"job_name": scrape_job(spec),
                           "scrape_interval": f"{spec.settings.observability.scrape_interval}s",
                           "metrics_path": path, "scheme": scheme}
    credentials = token_file(spec)
    if credentials is not None:
        job["authorization"] = {"type": "Bearer", "credentials_file": credentials}
    job["static_configs"] = static_configs(spec)
    return {"scrape_configs": [job]}


def scrape_yaml(spec: ServingSpec) -> str:
    """The scrape config with what to do with it, as comments."""
    lines = [f"# Prometheus scrape config for the vLLM server of stack {spec.stack}: merge this job into the",
             "# scrape_configs: of prometheus.yml; the alerts are vllm-stack render "
             f"{spec.stack} --format alerts (under rule_files:)."]
    hosts = fleet_hosts(spec)
    if hosts:
        lines.append(f"# A Docker fleet: one target per host of target.hosts ({', '.join(h.id for h in hosts)}), "
                     f"labelled {HOST_LABEL}.")
    credentials = token_file(spec)
    if credentials is not None:
        lines += [f"# {credentials}: put the stack's API key there (pulumi config get apiKey > FILE, mode 0600).",
                  "# vLLM itself serves /metrics without the key (it checks only /v1 paths); the token matters",
                  "# only behind an authenticating proxy in front of the server."]
    return "\n".join(lines) + "\n" + yaml.safe_dump(scrape_config(spec), sort_keys=False, width=120)
