"""The Kubernetes objects as the API server and kubectl read them: valid against the published
schemas (Kubernetes' OpenAPI, prometheus-operator's CRDs), selectors that select, and the keys a
refusal names. Expected values come from the stack file and the schemas, never the renderer."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from tests.crd_schema import crd_errors
from tests.kubernetes.cluster_version import KUBERNETES_VERSION
from tests.observability.helpers import PROMETHEUS_RULE_CRD, SERVICE_MONITOR_CRD
from tests.stack_builders import make_spec
from vllm_serving.findings import ConfigError, Severity
from vllm_serving.render.kubernetes.objects import kubernetes_objects, render_objects
from vllm_serving.render.kubernetes.parts import SECRETS_CHECKSUM
from vllm_serving.spec import ServingSpec

CRDS = {"ServiceMonitor": SERVICE_MONITOR_CRD, "PrometheusRule": PROMETHEUS_RULE_CRD}
OBSERVED = {"prometheusOperator": True, "grafanaDashboard": True}


def _everything() -> ServingSpec:
    """a100-k8s with every optional object: secrets, a pull secret, a weights claim, monitoring."""
    return make_spec(secrets=("apiKey", "registryPassword"),
                     image={"username": "robot", "registry": "harbor.local:30000"},
                     kubernetes={"weights": {"claim": {"size": "64g", "storageClassName": "fast"}}},
                     observability=OBSERVED)


def _by_kind(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects}


def test_every_object_is_valid_for_the_api_server_and_the_crds() -> None:
    """Strict as `kubectl apply` is: a misspelt or missing field, kind or apiVersion is refused."""
    objects = kubernetes_objects(_everything(), {"apiKey": "k", "registryPassword": "p"})
    kinds = [o["kind"] for o in objects]
    assert kinds == ["Namespace", "Secret", "Secret", "PersistentVolumeClaim", "PersistentVolumeClaim",
                     "Deployment", "Service", "NetworkPolicy", "ServiceMonitor", "PrometheusRule", "ConfigMap"]
    for obj in objects:
        if obj["kind"] in CRDS:
            assert crd_errors(CRDS[obj["kind"]], obj) == [], obj["kind"]
        else:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def test_selectors_select_the_server_pods() -> None:
    """The API refuses a Deployment whose selector does not match its template's labels; the
    Service, NetworkPolicy and ServiceMonitor must pick the server's pods and Service."""
    found = _by_kind(kubernetes_objects(_everything()))
    pod_labels = found["Deployment"]["spec"]["template"]["metadata"]["labels"]
    # the stack's container.name is `vllm`: the instance label is that, the name label `vllm`
    expected = {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "vllm"}
    assert found["Deployment"]["spec"]["selector"]["matchLabels"] == expected
    assert found["Service"]["spec"]["selector"] == expected
    assert found["NetworkPolicy"]["spec"]["podSelector"]["matchLabels"] == expected
    assert expected.items() <= pod_labels.items()
    monitor = found["ServiceMonitor"]["spec"]["selector"]["matchLabels"]
    assert monitor.items() <= found["Service"]["metadata"]["labels"].items()
    assert "app.kubernetes.io/version" not in monitor, "an upgrade's new tag must not unselect the Service"
    assert found["NetworkPolicy"]["metadata"]["labels"]["app.kubernetes.io/component"] == "inference-server"


def test_the_dashboard_lands_in_the_namespace_grafana_watches() -> None:
    found = _by_kind(kubernetes_objects(_everything()))
    assert found["ConfigMap"]["metadata"]["namespace"] == "vllm"  # kubernetes.namespace of a100-k8s
    elsewhere = make_spec(observability={**OBSERVED, "dashboardNamespace": "monitoring"})
    assert _by_kind(kubernetes_objects(elsewhere))["ConfigMap"]["metadata"]["namespace"] == "monitoring"


def test_a_changed_key_rolls_the_pods_and_an_unknown_one_says_nothing() -> None:
    spec = make_spec(secrets=("apiKey",))

    def checksum(secrets: dict[str, str] | None) -> str | None:
        objects = _by_kind(kubernetes_objects(spec, secrets))
        return objects["Deployment"]["spec"]["template"]["metadata"]["annotations"].get(SECRETS_CHECKSUM)

    first, second = checksum({"apiKey": "key-one"}), checksum({"apiKey": "key-two"})
    assert first is not None and second is not None and first != second
    assert checksum(None) is None and checksum({}) is None  # offline (masked): no checksum of the mask
    assert "key-one" not in first


def test_the_credentials_secret_carries_the_values_given() -> None:
    found = _by_kind(kubernetes_objects(make_spec(secrets=("apiKey",)), {"apiKey": "sk-given"}))
    assert found["Secret"]["stringData"] == {"VLLM_API_KEY": "sk-given"}


def test_a_cache_volume_name_becomes_a_valid_claim_name() -> None:
    """A Docker-style volume name (`vllm_cache`) is no DNS-1123 name: `_` becomes `-`."""
    objs = render_objects(make_spec(cache={"enabled": True, "volumeName": "Vllm_Cache"}))
    assert objs.cache_claim is not None and objs.cache_claim["metadata"]["name"] == "vllm-cache"
    kubernetes_validate.validate(objs.cache_claim, KUBERNETES_VERSION, strict=True)


def test_a_volume_name_no_claim_can_have_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError) as err:
        render_objects(make_spec(model={"volumeName": "Qwen_Weights"}))
    finding = err.value.findings[0]
    assert finding.key == "vllm-serving:model.volumeName"
    assert finding.severity is Severity.ERROR and "kubernetes.weights" in finding.fix


def test_a_shared_rwo_cache_is_an_error_that_blocks() -> None:
    with pytest.raises(ConfigError) as err:
        render_objects(make_spec(kubernetes={"replicas": 2}))
    assert err.value.findings[0].severity is Severity.ERROR


def test_the_preflight_fix_names_the_key_the_weights_come_from() -> None:
    spec = make_spec(model={"volumeName": None, "hostPath": "/data/models/Qwen3.6-27B-FP8"})
    init = render_objects(spec).workload["spec"]["template"]["spec"]["initContainers"][0]
    where = init["args"][init["args"].index("--weights-source") + 1]
    assert where == "the node directory /data/models/Qwen3.6-27B-FP8 (vllm-serving:model.hostPath)"
