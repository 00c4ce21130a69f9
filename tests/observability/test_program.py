"""The program under Pulumi's mocks with observability on: prometheus-operator's CRDs read first,
the rendered ServiceMonitor, PrometheusRule and dashboard ConfigMap registered; without the CRDs,
nothing is, and the log says how to install them."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from tests.conftest import RunProgram, shipped_stack
from tests.observability.helpers import ON
from tests.pulumi_harness import ProgramFailed, _Mocks, as_manifest
from tests.stack_builders import make_spec
from vllm_serving.render.kubernetes.monitoring import CRD_NAMES, INSTALL_HINT
from vllm_serving.render.kubernetes.objects import kubernetes_objects
from vllm_serving.views.kubernetes_plan import planned_kubernetes_resources

CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
MONITOR_TYPE = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"
RULE_TYPE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"


def _config(**observability: Any) -> dict[str, Any]:
    config = shipped_stack("a100-k8s")
    config["vllm-serving:observability"] = observability or ON
    return config


def test_registers_the_rendered_objects_after_reading_the_crds(program: RunProgram) -> None:
    run = program(_config(), stack="a100-k8s")
    assert [(t, i) for t, _, i in run.reads] == [(CRD_TYPE, name) for name in CRD_NAMES]
    spec = make_spec(observability=ON)
    captured = [as_manifest(r.inputs) for r in run.resources if r.type.startswith("kubernetes:")]
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
    assert sorted(captured, key=key) == sorted(kubernetes_objects(spec), key=key)
    assert run.applied() == sorted(planned_kubernetes_resources(spec))
    for custom in (run.one(MONITOR_TYPE), run.one(RULE_TYPE)):
        assert any("-crd" in urn for urn in custom.dependencies), custom.dependencies
    # everything waits for the reads: the namespace (first of all) depends on them
    namespace = run.one("core/v1:Namespace")
    assert sum("-crd" in urn for urn in namespace.dependencies) == len(CRD_NAMES)
    assert any(INSTALL_HINT in line for line in run.infos)


def test_the_dashboard_alone_needs_no_crd(program: RunProgram) -> None:
    run = program(_config(grafanaDashboard=True), stack="a100-k8s")
    assert run.reads == []
    assert run.one("core/v1:ConfigMap").inputs["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert run.of_type("monitoring.coreos.com/v1:ServiceMonitor") == []


def test_a_cluster_without_prometheus_operator_gets_nothing(program: RunProgram,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    answer = _Mocks.new_resource

    def no_crd(self: _Mocks, args: Any) -> tuple[str, dict[str, Any]]:
        if args.typ == CRD_TYPE and args.resource_id == CRD_NAMES[1]:
            raise LookupError(f"resource '{args.resource_id}' does not exist")
        return answer(self, args)

    logged: list[str] = []
    info = pulumi.log.info
    monkeypatch.setattr(_Mocks, "new_resource", no_crd)
    monkeypatch.setattr(pulumi.log, "info", lambda message, *a, **k: (logged.append(message), info(message, *a, **k)))
    with pytest.raises(ProgramFailed) as failed:
        program(_config(), stack="a100-k8s", preview=True)
    assert CRD_NAMES[1] in str(failed.value)
    assert [r.type for r in failed.value.resources if r.type.startswith("kubernetes:")] == []
    hint = next(line for line in logged if CRD_NAMES[1] in line)
    assert "kube-prometheus-stack" in hint and "stripped-down-crds.yaml" in hint
    assert "observability.prometheusOperator: false" in hint
