"""`pulumi up` after someone ran `kubectl scale` or `kubectl edit`: the stack's values win.

kubectl takes the fields it changes under its own field manager (`kubectl-scale`, `kubectl-edit`),
which pulumi-kubernetes does not take over before its server-side apply (provider/pkg/await/await.go
`fixCSAFieldManagers` takes over `kubectl`, `before-first-apply` and its own client-side manager
only): the next update conflicts on those fields unless forced (`patchForce`, line 1031). Every
object carries `pulumi.com/patchForce: "true"`; fields the stack does not set stay kubectl's.
"""

from __future__ import annotations

import pytest

from tests.scenario.cluster import Cluster
from tests.scenario.kubernetes_provider import cluster_engine
from tests.scenario.state import StepFailed
from tests.stack_builders import stack_values

CLAIM = {"weights": {"claim": {"size": "64g", "storageClassName": "standard"}}}


def test_the_next_up_after_kubectl_scale_and_edit_sets_the_stack_values_back() -> None:
    cluster = Cluster()
    engine = cluster_engine(cluster)
    assert engine.up(stack_values("a100-k8s", kubernetes=CLAIM)).ok
    cluster.kubectl("Deployment", "vllm", "spec.replicas", 0, "kubectl-scale")  # parked overnight
    cluster.kubectl("Service", "vllm", "spec.type", "NodePort", "kubectl-edit")
    cluster.kubectl("Service", "vllm", "metadata.labels.team", "inference", "kubectl-edit")

    # a change that updates both: a new release relabels every object and rolls the pods
    upgraded = engine.up(stack_values("a100-k8s", kubernetes=CLAIM, image={"tag": "v0.19.0"}))
    assert upgraded.ok, upgraded.error
    assert upgraded.of("vllm", "Deployment") == upgraded.of("vllm", "Service") == ["update"]
    assert cluster.find("Deployment", "vllm").body["spec"]["replicas"] == 1
    service = cluster.find("Service", "vllm").body
    assert service["spec"]["type"] == "ClusterIP"
    assert service["metadata"]["labels"]["team"] == "inference"  # not the stack's: left alone


def test_without_force_the_apply_conflicts_with_kubectl() -> None:
    # the provider's apply when the object does not ask for force
    cluster = Cluster()
    cluster.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "vllm", "namespace": "vllm"},
                    "spec": {"replicas": 1}}, "pulumi-kubernetes-1")
    cluster.kubectl("Deployment", "vllm", "spec.replicas", 0, "kubectl-scale")
    mine = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "vllm", "namespace": "vllm"},
            "spec": {"replicas": 1}}
    with pytest.raises(StepFailed, match=r"conflict.*spec\.replicas \(owned by kubectl-scale\)"):
        cluster.apply(mine, "pulumi-kubernetes-1", force=False)
    assert cluster.apply(mine, "pulumi-kubernetes-1", force=True).body["spec"]["replicas"] == 1
