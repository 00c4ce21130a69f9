"""A server across nodes on a cluster whose LeaderWorkerSet predates `status.observedGeneration`.

pulumi-kubernetes takes a `condition=Available` as current unless the condition or the status names
an older generation (provider/pkg/await/condition/kubectl.go `checkCondition`). LeaderWorkerSet
v0.8.x and older record no generation (lws pkg/controllers/leaderworkerset_controller.go
`makeCondition`; `status.observedGeneration` came with v0.9.0, lws #807): after an update the
previous rollout's Available satisfies the await at once and `pulumi up` ends before a new pod is
ready. The CRD accepts the object, so the program refuses such a cluster from the CRD it reads.
"""

from __future__ import annotations

from typing import Any

from tests.crd_schema import LWS_V0_8
from tests.kubernetes.multi_node_stacks import two_node_values
from tests.scenario.cluster import LWS_CRD, Cluster, check_condition
from tests.scenario.kubernetes_provider import cluster_engine
from vllm_serving.render.kubernetes.leader_worker_set import INSTALL_COMMAND, OBSERVED_GENERATION_RELEASE

LWS, LWS_OBJECT = "vllm", "vllm-group"  # the resource, the object (`<name>-group`)


def _config(**engine: Any) -> dict[str, Any]:
    values = two_node_values(engine=engine) if engine else two_node_values()
    return {k: v for k, v in values.items() if not k.endswith(":apiKey")}


def _existing_weights(cluster: Cluster) -> None:
    """The namespace and the claim the operator filled with the weights beforehand."""
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vllm"}}, "kubectl")
    cluster.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "llama-3-1-405b", "namespace": "vllm"}, "spec": {}}, "kubectl")


def test_an_outdated_leader_worker_set_is_refused_before_anything_is_created() -> None:
    cluster = Cluster(crds={LWS_CRD: LWS_V0_8}, lws_release="v0.8.0")
    _existing_weights(cluster)
    before = set(cluster.objects)
    engine = cluster_engine(cluster, stack="llama-2n")

    refused = engine.up(_config())
    assert not refused.ok
    assert "kubernetes.nodes" in refused.error and OBSERVED_GENERATION_RELEASE in refused.error
    assert INSTALL_COMMAND in refused.error
    assert set(cluster.objects) == before  # nothing was applied

    cluster.crds, cluster.lws_release = {LWS_CRD: None}, "v0.10.0"  # upgraded with the command given
    upgraded = engine.up(_config())
    assert upgraded.ok, upgraded.error
    assert upgraded.of(LWS, "LeaderWorkerSet") == ["create"]


def test_an_update_waits_for_the_new_generation_to_be_available() -> None:
    cluster = Cluster()
    _existing_weights(cluster)
    engine = cluster_engine(cluster, stack="llama-2n")
    assert engine.up(_config()).ok
    updated = engine.up(_config(maxModelLen=16384))  # new args: every group rolls
    assert updated.ok and updated.of(LWS, "LeaderWorkerSet") == ["update"]
    assert cluster.find("LeaderWorkerSet", LWS_OBJECT).generation == 2
    assert cluster.returned_early == []


def test_the_await_takes_a_condition_without_a_generation_as_current() -> None:
    # checkCondition on the status a rollout starts from: the previous generation's Available
    old_controller = {"conditions": [{"type": "Available", "status": "True"}]}
    new_controller = {"observedGeneration": 1,
                      "conditions": [{"type": "Available", "status": "True", "observedGeneration": 1}]}
    assert check_condition(old_controller, generation=2, kind="Available")
    assert not check_condition(new_controller, generation=2, kind="Available")
