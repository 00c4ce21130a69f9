"""Claims the stack creates are not awaited: the workload that binds them would wait for them.

pulumi-kubernetes awaits a new claim until Bound, for 5 minutes; it accepts Pending only under a
WaitForFirstConsumer class it may read (provider/pkg/await/awaiters.go
`untilCoreV1PersistentVolumeClaimReady`). Such a claim binds when a pod uses it, and the Deployment
depends on the claim: without permission to read StorageClasses (a namespaced deployer) every
create failed after five minutes. `pulumi.com/skipAwait` on the claims; the Deployment's own
await checks its claims (await/deployment.go `checkPersistentVolumeClaimStatus`).
"""

from __future__ import annotations

import pytest

from tests.scenario.cluster import WAIT_FOR_FIRST_CONSUMER, Cluster
from tests.scenario.kubernetes_provider import KubernetesProvider, cluster_engine
from tests.scenario.state import Goal, InitError
from tests.stack_builders import stack_values

CLAIM = {"weights": {"claim": {"size": "64g", "storageClassName": "local-nvme"}}}


@pytest.mark.parametrize("may_read_classes", [False, True], ids=["namespaced-deployer", "cluster-reader"])
def test_claims_under_wait_for_first_consumer_are_bound_by_the_deployment(may_read_classes: bool) -> None:
    cluster = Cluster(storage_classes={"local-nvme": WAIT_FOR_FIRST_CONSUMER}, default_class="local-nvme",
                      may_read_storage_classes=may_read_classes)
    engine = cluster_engine(cluster)
    first = engine.up(stack_values("a100-k8s", kubernetes=CLAIM))
    assert first.ok, first.error
    for claim in ("vllm-weights", "vllm-cache"):
        assert cluster.claim_phase(cluster.find("PersistentVolumeClaim", claim)) == "Bound"
    assert cluster.find("Deployment", "vllm").status["availableReplicas"] == 1
    assert engine.up(stack_values("a100-k8s", kubernetes=CLAIM)).ok  # and the next run


def test_an_awaited_claim_nobody_consumes_fails_its_create() -> None:
    # the provider's await on a claim without skipAwait, when it may not read the class
    cluster = Cluster(storage_classes={"local-nvme": WAIT_FOR_FIRST_CONSUMER}, default_class="local-nvme",
                      may_read_storage_classes=False)
    provider = KubernetesProvider(cluster)
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vllm"}}, "ops")
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "weights", "namespace": "vllm"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "64Gi"}}}}
    goal = Goal("urn:claim", "kubernetes:core/v1:PersistentVolumeClaim", "weights", claim, "", False, True, None,
                (), ())
    with pytest.raises(InitError, match="Pending, not Bound, after 5m0s"):
        provider.create(goal, {})


def test_a_claim_no_class_can_bind_fails_the_deployments_create_naming_the_claim() -> None:
    """Not awaited itself, a claim that cannot bind (a class the cluster lacks) is still caught: the
    Deployment's await names it when it times out (await/deployment.go `errorMessages`)."""
    cluster = Cluster(storage_classes={"local-nvme": WAIT_FOR_FIRST_CONSUMER}, default_class="local-nvme")
    engine = cluster_engine(cluster)
    typo = {"weights": {"claim": {"size": "64g", "storageClassName": "local-nvm"}}}
    first = engine.up(stack_values("a100-k8s", kubernetes=typo))
    assert not first.ok
    assert 'Failed to bind PersistentVolumeClaim(s): "vllm-weights"' in first.error
    assert first.of("vllm-weights") == ["create"] and first.of("vllm", "Deployment") == ["create-failed"]
