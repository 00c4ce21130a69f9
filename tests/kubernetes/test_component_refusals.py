"""What `VllmKubernetes` says when it cannot do what the stack asks: a secret the stack sets but the
program was not given, a provider setting that keeps it from adopting what `destroy` kept, a CRD
whose LeaderWorkerSet version records no generation; and what it registers with no namespace or
NetworkPolicy of its own."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from components.kubernetes.vllm_kubernetes import VllmKubernetes, _status_fields
from tests.conftest import RunProgram, shipped_stack
from tests.pulumi_harness import as_manifest, recording_mocks
from tests.stack_builders import make_spec


def test_a_secret_the_stack_sets_without_a_value_is_named() -> None:
    recording_mocks("a100-k8s")
    with pytest.raises(ValueError, match="the stack sets the secret apiKey but no value was passed"):
        VllmKubernetes("vllm", make_spec(secrets=("apiKey",)), {})


def test_a_client_side_apply_provider_is_told_it_cannot_adopt(program: RunProgram) -> None:
    """pulumi-kubernetes' upsert is a server-side apply (await.go `Creation`): with
    kubernetes:enableServerSideApply false the next `up` after `destroy` stops at AlreadyExists."""
    config = {**shipped_stack("a100-k8s"), "kubernetes:enableServerSideApply": "false"}
    run = program(config, stack="a100-k8s", secrets={"apiKey": "SENTINEL-ssa-key"})
    (warning,) = [w for w in run.warnings if "enableServerSideApply" in w]
    assert "kubernetes:enableServerSideApply is false" in warning and "AlreadyExists" in warning
    # what to do, not only what breaks: drop the key, since server-side apply is the default
    assert "remove the key (server-side apply is the default) to let it adopt them" in warning
    quiet = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={"apiKey": "SENTINEL-ssa-key"})
    assert not [w for w in quiet.warnings if "enableServerSideApply" in w]


def _version(name: str, status: dict[str, Any] | None) -> Any:
    properties = {} if status is None else {"status": SimpleNamespace(properties=status)}
    return SimpleNamespace(name=name, schema=SimpleNamespace(open_apiv3_schema=SimpleNamespace(properties=properties)))


def test_the_status_fields_are_read_from_the_v1_version_whatever_else_the_crd_serves() -> None:
    """A CRD lists its versions in any order; the LeaderWorkerSet the stack renders is v1."""
    crd = SimpleNamespace(versions=[_version("v1alpha1", {"replicas": {}}),
                                    _version("v1", {"observedGeneration": {}, "conditions": {}})])
    assert _status_fields(crd) == frozenset({"observedGeneration", "conditions"})
    assert _status_fields(SimpleNamespace(versions=[_version("v1", None)])) == frozenset()
    assert _status_fields(SimpleNamespace(versions=[_version("v1alpha1", {"observedGeneration": {}})])) == frozenset()
    assert _status_fields(None) == frozenset()


def test_with_no_namespace_or_policy_of_its_own_the_rest_waits_for_nothing(program: RunProgram) -> None:
    config = shipped_stack("a100-k8s")
    config["vllm-serving:kubernetes"] = {**config["vllm-serving:kubernetes"], "createNamespace": False,
                                         "networkPolicy": False}
    run = program(config, stack="a100-k8s", secrets={"apiKey": "SENTINEL-no-ns-key"})
    kinds = {r.type.rsplit(":", 1)[1] for r in run.resources if r.custom and r.type.startswith("kubernetes:")}
    assert "Namespace" not in kinds and "NetworkPolicy" not in kinds
    assert {"Deployment", "Service", "Secret", "PersistentVolumeClaim"} <= kinds
    assert run.one("apps/v1:Deployment").inputs["metadata"]["namespace"] == "vllm"


def test_outputs_name_the_service_clients_reach(program: RunProgram) -> None:
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={"apiKey": "SENTINEL-out-key"})
    out = run.outputs
    assert (out["namespace"], out["serviceName"]) == ("vllm", "vllm")
    assert out["scaleOut"]["workload"] == "Deployment vllm"
    assert out["baseUrl"] == "http://vllm.vllm.svc.cluster.local:8000/v1"


def test_prometheus_operators_crds_are_read_first_and_named_in_the_log(program: RunProgram) -> None:
    """The CRDs the installed prometheus-operator serves (tests/fixtures/crds), read before the
    ServiceMonitor and PrometheusRule that need them; the dashboard ConfigMap needs neither."""
    config = {**shipped_stack("a100-k8s"),
              "vllm-serving:observability": {"prometheusOperator": True, "grafanaDashboard": True}}
    run = program(config, stack="a100-k8s", secrets={"apiKey": "SENTINEL-monitoring-key"})
    crds = ["servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com"]
    assert [read[2] for read in run.reads] == crds
    for kind in ("ServiceMonitor", "PrometheusRule"):
        (custom,) = [r for r in run.resources if r.type == f"kubernetes:monitoring.coreos.com/v1:{kind}"]
        assert sorted(u.rsplit("::", 1)[1] for u in custom.dependencies if "CustomResourceDefinition" in u) == [
            "vllm-prometheusrules-crd", "vllm-servicemonitors-crd"], kind
    dashboard = run.one("core/v1:ConfigMap")
    assert not [u for u in dashboard.dependencies if "CustomResourceDefinition" in u]
    (line,) = [line for line in run.infos if "prometheus-operator's CRDs" in line]
    assert all(crd in line for crd in crds) and "observability.prometheusOperator: false" in line
    # under the component in `pulumi preview`'s tree, and the install hint beside the first read
    component = run.one("vllm-serving:kubernetes:VllmKubernetes")
    assert {name: parent.rsplit("::", 1)[1] for name, parent in run.read_parents.items()} == {
        "vllm-servicemonitors-crd": component.name, "vllm-prometheusrules-crd": component.name}
    assert all("VllmKubernetes::" in parent for parent in run.read_parents.values())
    (logged,) = [entry for entry in run.logged if "prometheus-operator's CRDs" in entry.message]
    assert logged.urn.endswith("CustomResourceDefinition::vllm-servicemonitors-crd"), logged.urn


def test_the_pull_secret_carries_the_stacks_login(program: RunProgram) -> None:
    """What the kubelet sends the registry: the stack file's user and the password given, and
    `auth` base64 of user:password (Docker's config format), by hand: base64("robot:pw-1") = cm9ib3Q6cHctMQ==."""
    config = shipped_stack("a100-k8s")
    config["vllm-serving:image"] = {**config["vllm-serving:image"], "username": "robot", "registry": "harbor.local"}
    run = program(config, stack="a100-k8s", secrets={"apiKey": "SENTINEL-login-key", "registryPassword": "pw-1"})
    (secret,) = [r for r in run.resources if r.type == "kubernetes:core/v1:Secret"
                 and r.inputs["type"] == "kubernetes.io/dockerconfigjson"]
    auths = json.loads(as_manifest(secret.inputs["stringData"])[".dockerconfigjson"])["auths"]
    assert auths == {"harbor.local": {"username": "robot", "password": "pw-1", "auth": "cm9ib3Q6cHctMQ=="}}


def test_every_resource_of_a_full_stack_is_a_child_of_the_component(program: RunProgram) -> None:
    """A resource's URN carries its parent's type: one registered outside the component (the
    dashboard, the budget, the adopting provider) would get a new URN, and `pulumi up` would
    replace it."""
    config = shipped_stack("a100-k8s")
    config["vllm-serving:kubernetes"] = {**config["vllm-serving:kubernetes"], "replicas": 2,
                                         "cache": {"accessMode": "ReadWriteMany"}}
    config["vllm-serving:observability"] = {"prometheusOperator": True, "grafanaDashboard": True}
    run = program(config, stack="a100-k8s", secrets={"apiKey": "SENTINEL-child-key"})
    (component,) = [r for r in run.resources if r.type == "vllm-serving:kubernetes:VllmKubernetes"]
    mine = [r for r in run.resources if r.type.startswith(("kubernetes:", "pulumi:providers:kubernetes"))]
    kinds = {r.type.rsplit(":", 1)[1] for r in mine}
    assert {"PodDisruptionBudget", "ConfigMap", "ServiceMonitor", "PrometheusRule", "kubernetes"} <= kinds
    assert [r.name for r in mine if not r.parent.endswith(f"VllmKubernetes::{component.name}")] == []
    (adopting,) = [r for r in mine if r.type == "pulumi:providers:kubernetes"]
    assert adopting.name == "vllm-adopting"
    # and on a fresh cluster each object in the namespace waits for it (the API server refuses an
    # object whose namespace does not exist yet): the budget and the monitoring objects too
    (namespace,) = [r for r in mine if r.type == "kubernetes:core/v1:Namespace"]
    inside = [r for r in mine if (r.inputs.get("metadata") or {}).get("namespace") == "vllm"]
    assert {"PodDisruptionBudget", "ConfigMap", "ServiceMonitor", "PrometheusRule"} <= {
        r.type.rsplit(":", 1)[1] for r in inside}
    assert [r.name for r in inside if not any(u.endswith(f"::{namespace.name}") for u in r.dependencies)] == []
