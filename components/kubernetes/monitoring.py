"""The observability resources of a Kubernetes stack: ServiceMonitor, PrometheusRule, dashboard ConfigMap.

The objects are those `vllm-stack render --format k8s` prints (`render/kubernetes/monitoring.py`).
ServiceMonitor and PrometheusRule are prometheus-operator's custom resources: their CRDs are read
from the cluster first (`VllmKubernetes` makes everything wait for the reads, as for the
LeaderWorkerSet CRD), so a cluster without prometheus-operator fails the preview ("resource ...
does not exist") before anything is created, with a line beside it saying how to install it.
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from vllm_serving.render.kubernetes.monitoring import CRD_NAMES, INSTALL_HINT, monitoring_objects
from vllm_serving.spec import ServingSpec


def operator_crds(parent: pulumi.Resource, name: str, spec: ServingSpec) -> list[pulumi.Resource]:
    """Read prometheus-operator's CRDs, when the stack deploys a ServiceMonitor and a PrometheusRule."""
    if not spec.settings.observability.prometheus_operator:
        return []
    crds: list[pulumi.Resource] = [
        k8s.apiextensions.v1.CustomResourceDefinition.get(
            f"{name}-{crd.split('.', 1)[0]}-crd", crd, opts=pulumi.ResourceOptions(parent=parent))
        for crd in CRD_NAMES]
    pulumi.log.info(f"observability.prometheusOperator needs prometheus-operator's CRDs ({', '.join(CRD_NAMES)}): "
                    f"{INSTALL_HINT}", resource=crds[0])
    return crds


def monitoring_resources(parent: pulumi.Resource, name: str, spec: ServingSpec,
                         first: list[pulumi.Input[pulumi.Resource]],
                         crds: list[pulumi.Resource]) -> list[pulumi.Resource]:
    """Register the observability objects the stack turns on; `first` is what they wait for (the
    namespace), `crds` the reads of `operator_crds`."""
    found: list[pulumi.Resource] = []
    for obj in monitoring_objects(spec):
        if obj["kind"] == "ConfigMap":
            found.append(k8s.core.v1.ConfigMap(
                f"{name}-dashboard", metadata=obj["metadata"], data=obj["data"],
                opts=pulumi.ResourceOptions(parent=parent, depends_on=first)))
        else:
            found.append(k8s.apiextensions.CustomResource(
                name, api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"], spec=obj["spec"],
                opts=pulumi.ResourceOptions(parent=parent, depends_on=[*first, *crds])))
    return found
