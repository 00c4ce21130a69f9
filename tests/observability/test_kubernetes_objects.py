"""`render a100-k8s --format k8s` with observability on: a ServiceMonitor and a PrometheusRule valid
against prometheus-operator's published CRD schemas, and a dashboard ConfigMap valid for Kubernetes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.crd_schema import crd_errors
from tests.kubernetes.cluster_version import KUBERNETES_VERSION
from tests.observability.helpers import PROMETHEUS_RULE_CRD, SERVICE_MONITOR_CRD, observed_spec
from tests.paths import PROJECT_DIR, stack_file
from tests.stack_builders import make_spec
from vllm_serving.cli import main
from vllm_serving.observability.alerts import rule_groups
from vllm_serving.observability.dashboard import dashboard_json
from vllm_serving.render.kubernetes.monitoring import monitoring_objects
from vllm_serving.render.kubernetes.objects import kubernetes_objects

OBSERVABILITY = """  vllm-serving:observability:
    prometheusOperator: true
    grafanaDashboard: true
    labels: {release: kube-prometheus-stack}
    scrapeInterval: 30s
"""


@pytest.fixture
def observed_project(tmp_path: Path) -> Path:
    """A copy of the project whose a100-k8s turns observability on."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "Pulumi.a100-k8s.yaml").write_text((stack_file("a100-k8s")).read_text() + OBSERVABILITY)
    return tmp_path


def _by_kind(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects}


def test_render_a100_k8s_includes_the_three_objects(observed_project: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--project-dir", str(observed_project), "render", "a100-k8s", "--format", "k8s"])
    out = capsys.readouterr().out
    assert code == 0
    documents = list(yaml.safe_load_all(out))
    assert [d["kind"] for d in documents][-3:] == ["ServiceMonitor", "PrometheusRule", "ConfigMap"]
    found = _by_kind(documents)
    assert crd_errors(SERVICE_MONITOR_CRD, found["ServiceMonitor"]) == []
    assert crd_errors(PROMETHEUS_RULE_CRD, found["PrometheusRule"]) == []
    kubernetes_validate.validate(found["ConfigMap"], KUBERNETES_VERSION, strict=True)
    assert found["ServiceMonitor"]["spec"]["endpoints"][0]["interval"] == "30s"
    for kind in ("ServiceMonitor", "PrometheusRule"):
        assert found[kind]["metadata"]["labels"]["release"] == "kube-prometheus-stack"


def test_the_stack_files_commented_example_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Pulumi.a100-k8s.yaml shows how to turn observability on, commented out: uncommented, it renders."""
    text = (stack_file("a100-k8s")).read_text()
    head, example = text.split("  # vllm-serving:observability:\n")
    example = "  # vllm-serving:observability:\n" + example
    assert all(line.startswith("  # ") for line in example.splitlines())
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    uncommented = "".join(line.replace("  # ", "  ", 1) for line in example.splitlines(keepends=True))
    (tmp_path / "Pulumi.a100-k8s.yaml").write_text(head + uncommented)
    assert main(["--project-dir", str(tmp_path), "render", "a100-k8s", "--format", "k8s"]) == 0
    kinds = [d["kind"] for d in yaml.safe_load_all(capsys.readouterr().out)]
    assert kinds[-3:] == ["ServiceMonitor", "PrometheusRule", "ConfigMap"]


def test_the_schemas_catch_a_misspelt_field() -> None:
    """The validators are strict as kubectl is: a field the CRD does not list is an error."""
    monitor = _by_kind(monitoring_objects(observed_spec()))["ServiceMonitor"]
    monitor["spec"]["endpoints"][0]["intervall"] = "15s"
    assert any("intervall" in e for e in crd_errors(SERVICE_MONITOR_CRD, monitor))
    rule = _by_kind(monitoring_objects(observed_spec()))["PrometheusRule"]
    rule["spec"]["groups"][0]["rules"][0]["for"] = "ten minutes"
    assert crd_errors(PROMETHEUS_RULE_CRD, rule) != []


def test_the_service_monitor_selects_the_service_http_port() -> None:
    spec = observed_spec()
    objects = _by_kind(kubernetes_objects(spec))
    service, monitor = objects["Service"], objects["ServiceMonitor"]
    selected = monitor["spec"]["selector"]["matchLabels"]
    assert selected.items() <= service["metadata"]["labels"].items()
    assert "app.kubernetes.io/version" not in selected  # an upgrade keeps the Service selected
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [service["metadata"]["namespace"]]
    endpoint = monitor["spec"]["endpoints"][0]
    assert endpoint["port"] in [p["name"] for p in service["spec"]["ports"]]
    assert (endpoint["port"], endpoint["path"]) == ("http", "/metrics")
    assert "authorization" not in endpoint and "bearerTokenSecret" not in endpoint  # /metrics needs no key


def test_the_rule_and_the_dashboard_are_those_the_cli_prints() -> None:
    spec = observed_spec()
    objects = _by_kind(monitoring_objects(spec))
    assert objects["PrometheusRule"]["spec"] == rule_groups(spec)
    config_map = objects["ConfigMap"]
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert config_map["data"] == {"vllm-a100-k8s.json": dashboard_json(spec)}
    assert config_map["metadata"]["namespace"] == "vllm"
    elsewhere = observed_spec(observability={"dashboardNamespace": "monitoring"})
    assert _by_kind(monitoring_objects(elsewhere))["ConfigMap"]["metadata"]["namespace"] == "monitoring"


@pytest.mark.parametrize(("switches", "kinds"), [
    ({}, []),
    ({"prometheusOperator": True}, ["ServiceMonitor", "PrometheusRule"]),
    ({"grafanaDashboard": True}, ["ConfigMap"]),
])
def test_each_switch_adds_its_objects(switches: dict[str, bool], kinds: list[str]) -> None:
    spec = make_spec(observability=switches)
    assert [o["kind"] for o in monitoring_objects(spec)] == kinds
    assert [o["kind"] for o in kubernetes_objects(spec)][len(kubernetes_objects(spec)) - len(kinds):] == kinds


def test_a_docker_stack_renders_no_monitoring_objects() -> None:
    """The switches are Kubernetes-only (the rule observability-kubernetes-only says so)."""
    assert monitoring_objects(make_spec("a100", observability={"prometheusOperator": True})) == []
