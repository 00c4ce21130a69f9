"""The observability objects `VllmKubernetes` registers (components/kubernetes/monitoring.py)."""

from __future__ import annotations

import json

from tests.conftest import RunProgram, shipped_stack


def test_the_dashboard_config_map_carries_the_dashboard(program: RunProgram) -> None:
    """Grafana's sidecar loads every `*.json` key of a labelled ConfigMap as a dashboard: without
    the data the user finds no dashboard, with no error anywhere."""
    config = {**shipped_stack("a100-k8s"), "vllm-serving:observability": {"grafanaDashboard": True}}
    run = program(config, stack="a100-k8s", secrets={"apiKey": "SENTINEL-dashboard-key"})
    data = run.one("core/v1:ConfigMap").inputs["data"]
    assert list(data) == ["vllm-a100-k8s.json"]
    dashboard = json.loads(data["vllm-a100-k8s.json"])
    assert (dashboard["uid"], dashboard["title"]) == ("vllm-a100-k8s", "vLLM a100-k8s")
    titles = [panel["title"] for panel in dashboard["panels"]]
    assert {"Requests running and waiting", "KV-cache usage", "Time to first token"} <= set(titles)
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert any("vllm:num_requests_running" in expr for expr in exprs)
