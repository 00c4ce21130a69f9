"""Day 2 on Kubernetes: `pulumi destroy`, then `pulumi up` again, with the weights kept.

`destroy` keeps the Namespace and the claims (retainOnDelete: the weights take hours to copy). Since
pulumi-kubernetes v4.29 a create is a plain Create unless the provider sets `upsertExistingObjects`
(provider/pkg/await/await.go `Creation`), so the next `up` would stop at AlreadyExists on the kept
namespace. The stack creates them through a provider that upserts, and `pulumi.com/patchForce`
lets the new stack's field manager take over fields the old one set differently. Sequence under
the modelled engine (tests/scenario): first up, destroy, the next up.
"""

from __future__ import annotations

import pytest

from tests.conftest import RunProgram, shipped_stack
from tests.scenario.cluster import Cluster
from tests.scenario.kubernetes_provider import KubernetesProvider, cluster_engine
from tests.scenario.state import Goal, StepFailed
from tests.stack_builders import stack_values

CLAIM = {"weights": {"claim": {"size": "64g", "storageClassName": "fast-ssd"}}}
KEPT = {"Namespace", "PersistentVolumeClaim"}
KEPT_NAMES = ("vllm-namespace", "vllm-weights", "vllm-cache")


def _cluster() -> Cluster:
    return Cluster(storage_classes={"fast-ssd": "Immediate", "standard": "Immediate"})


def _kept(cluster: Cluster) -> dict[tuple[str, str, str], int]:
    return {key: obj.uid for key, obj in cluster.objects.items() if key[0] in KEPT}


def test_up_after_destroy_adopts_the_kept_namespace_and_claims() -> None:
    cluster = _cluster()
    engine = cluster_engine(cluster)
    assert engine.up(stack_values("a100-k8s", kubernetes=CLAIM)).ok
    kept = _kept(cluster)
    assert {key[2] for key in kept} == {"vllm", "vllm-weights", "vllm-cache"}

    assert engine.destroy().ok
    assert {key: obj.uid for key, obj in cluster.objects.items()} == kept  # only what holds data stays

    # the next release meanwhile: its version label differs from what the old field manager set
    newer = stack_values("a100-k8s", kubernetes=CLAIM, image={"tag": "v0.19.0"})
    back = engine.up(newer)
    assert back.ok, back.error
    assert _kept(cluster) == kept  # adopted: the same claims, the weights in them
    assert cluster.find("Namespace", "vllm").body["metadata"]["labels"]["app.kubernetes.io/version"] == "v0.19.0"
    assert [engine.up(newer).of(name) for name in KEPT_NAMES] == [["same"]] * 3


def test_a_stack_deployed_before_moves_its_kept_objects_to_the_adopting_provider_in_place() -> None:
    cluster = _cluster()
    engine = cluster_engine(cluster)
    config = stack_values("a100-k8s", kubernetes=CLAIM)
    assert engine.up(config).ok
    # the state an earlier release of the program left: everything on the default provider
    for urn, entry in list(engine.state.items()):
        if entry.type == "pulumi:providers:kubernetes":
            del engine.state[urn]
        entry.provider = ""

    moved = engine.up(config)
    assert moved.ok
    assert [moved.of(name) for name in KEPT_NAMES] == [["same"]] * 3  # DiffConfig: the same cluster


def test_a_plain_create_of_a_kept_object_stops_at_already_exists() -> None:
    # the provider without upsertExistingObjects (await.go `Creation`), and with it
    cluster = _cluster()
    engine = cluster_engine(cluster)
    assert engine.up(stack_values("a100-k8s", kubernetes=CLAIM)).ok
    provider = engine.providers["kubernetes"]
    assert isinstance(provider, KubernetesProvider)
    namespace = engine.entry("vllm-namespace")
    goal = Goal(namespace.urn, namespace.type, namespace.name, namespace.inputs, "", False, True, None, (), ())
    with pytest.raises(StepFailed, match="already exists"):
        provider.create(goal, {})
    assert provider.create(goal, {"upsertExistingObjects": "true"})[0] == "vllm"


@pytest.mark.parametrize(("create_namespace", "cache", "adopting"), [
    # keeps nothing (an existing namespace, the weights in an existing claim, no compile cache)
    (False, False, False),
    (True, False, True),  # the namespace it creates
    (False, True, True),  # the compile-cache claim
])
def test_only_a_stack_that_keeps_something_on_destroy_registers_the_adopting_provider(
        program: RunProgram, create_namespace: bool, cache: bool, adopting: bool) -> None:
    """Upsert is only for what `destroy` leaves behind: a stack that keeps nothing has no second
    provider in its preview, and every object stays on the default one."""
    config = shipped_stack("a100-k8s")  # weights: model.volumeName, a claim the stack does not create
    config["vllm-serving:kubernetes"] = {**config["vllm-serving:kubernetes"], "createNamespace": create_namespace}
    config["vllm-serving:cache"] = {"enabled": cache}
    run = program(config, stack="a100-k8s", secrets={"apiKey": "SENTINEL-adopt-key"})
    providers = [r.name for r in run.resources if r.type == "pulumi:providers:kubernetes"]
    assert providers == (["vllm-adopting"] if adopting else [])
    kinds = {r.type.rsplit(":", 1)[1] for r in run.resources if r.custom and r.type.startswith("kubernetes:")}
    assert ("Namespace" in kinds, "PersistentVolumeClaim" in kinds) == (create_namespace, cache)
