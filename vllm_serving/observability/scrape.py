"""The Prometheus scrape config of a stack (`render --format prometheus`): one static target, the
stack's metrics endpoint (`metricsUrl`), under the `job` (and, for a Kubernetes stack, the
`namespace`) label the alerts and the dashboard select.

The API key: vLLM v0.19.1 checks it only on paths that start with /v1 (`AuthenticationMiddleware`,
vllm/entrypoints/openai/server_utils.py), so /metrics answers without it. When the stack sets a
key, the job still names a bearer-token file (never the key itself), as an authenticating proxy
in front of the server (`network.behindProxy`) may ask for it on every path; against vLLM alone
it is harmless. The operator fills the file.
"""

from __future__ import annotations

from typing import Any

import yaml

from vllm_serving.observability.series import metrics_target, scrape_job, series_labels
from vllm_serving.spec import ServingSpec

TOKEN_DIRECTORY = "/etc/prometheus/secrets"


def token_file(spec: ServingSpec) -> str | None:
    """Where Prometheus reads the bearer token, when the stack sets an API key."""
    if "apiKey" not in spec.settings.secrets_set:
        return None
    return f"{TOKEN_DIRECTORY}/{scrape_job(spec)}-api-key"


def scrape_config(spec: ServingSpec) -> dict[str, Any]:
    """A prometheus.yml holding the stack's scrape job (merge its entry into yours)."""
    scheme, target, path = metrics_target(spec)
    static: dict[str, Any] = {"targets": [target]}
    extra = {k: v for k, v in series_labels(spec).items() if k != "job"}
    if extra:
        static["labels"] = extra
    job: dict[str, Any] = {"job_name": scrape_job(spec),
                           "scrape_interval": f"{spec.settings.observability.scrape_interval}s",
                           "metrics_path": path, "scheme": scheme}
    credentials = token_file(spec)
    if credentials is not None:
        job["authorization"] = {"type": "Bearer", "credentials_file": credentials}
    job["static_configs"] = [static]
    return {"scrape_configs": [job]}


def scrape_yaml(spec: ServingSpec) -> str:
    """The scrape config with what to do with it, as comments."""
    lines = [f"# Prometheus scrape config for the vLLM server of stack {spec.stack}: merge this job into the",
             "# scrape_configs: of prometheus.yml; the alerts are vllm-stack render "
             f"{spec.stack} --format alerts (under rule_files:)."]
    credentials = token_file(spec)
    if credentials is not None:
        lines += [f"# {credentials}: put the stack's API key there (pulumi config get apiKey > FILE, mode 0600).",
                  "# vLLM itself serves /metrics without the key (it checks only /v1 paths); the token matters",
                  "# only behind an authenticating proxy in front of the server."]
    return "\n".join(lines) + "\n" + yaml.safe_dump(scrape_config(spec), sort_keys=False, width=120)
