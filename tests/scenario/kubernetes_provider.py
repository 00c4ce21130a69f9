"""pulumi-kubernetes over a modelled cluster (cluster.py has the sources): create, update, the awaits."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from tests.crd_schema import read_crd
from tests.scenario.cluster import (
    CLAIM_FORCE_NEW,
    TAKEN_OVER,
    WAIT_FOR_FIRST_CONSUMER,
    Cluster,
    Object,
    annotation_true,
    check_condition,
    fields_of,
)
from tests.scenario.engine import Engine
from tests.scenario.state import Diff, Entry, Goal, InitError, StepFailed

FIELD_MANAGER = "__fieldManager"  # where the provider keeps the resource's manager in the state
CLAIM_AWAIT = "5m0s"
ALREADY_EXISTS = ("The resource already exists in the cluster. This can happen when: ... Intentional upsert: "
                  "set upsertExistingObjects on the provider to allow server-side apply to update existing "
                  "objects on create.")


class KubernetesProvider:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._managers = itertools.count(1)

    # --- the engine's calls ------------------------------------------------------------------
    def create(self, goal: Goal, config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        obj = _object(goal.inputs)
        ns = obj["metadata"].get("namespace")
        if ns and ("Namespace", "", ns) not in self.cluster.objects:
            raise StepFailed(f'namespaces "{ns}" not found')
        manager = f"pulumi-kubernetes-{next(self._managers)}"
        server_side = config.get("enableServerSideApply", "true") != "false"
        if server_side and config.get("upsertExistingObjects") == "true":
            live = self.cluster.apply(obj, manager, _forced(obj, config))
        elif Cluster.key(obj) in self.cluster.objects:
            raise StepFailed(f'{obj["kind"].lower()}s "{obj["metadata"]["name"]}" already exists\n\n{ALREADY_EXISTS}')
        else:
            live = self.cluster.create(obj, "pulumi-kubernetes")  # client-side: the static manager
        ident = f"{ns}/{obj['metadata']['name']}" if ns else obj["metadata"]["name"]
        outputs = {**_outputs(live), FIELD_MANAGER: manager}
        failure = self._await(obj, live, creating=True)
        if failure:
            raise InitError(failure, ident, outputs)
        return ident, {**_outputs(live), FIELD_MANAGER: manager}

    def update(self, old: Entry, goal: Goal, config: dict[str, Any]) -> dict[str, Any]:
        obj = _object(goal.inputs)
        live = self.cluster.objects.get(Cluster.key(obj))
        if live is None:
            raise StepFailed(f'{obj["kind"]} "{obj["metadata"]["name"]}" not found')
        manager = old.outputs[FIELD_MANAGER]
        for name in TAKEN_OVER:  # fixCSAFieldManagers
            live.managers.setdefault(manager, {}).update(live.managers.pop(name, {}))
        live = self.cluster.apply(obj, manager, _forced(obj, config))
        outputs = {**_outputs(live), FIELD_MANAGER: manager}
        failure = self._await(obj, live, creating=False)
        if failure:
            raise InitError(failure, old.id, outputs)
        return {**_outputs(live), FIELD_MANAGER: manager}

    def diff(self, old: Entry, goal: Goal) -> Diff:
        before, after = fields_of(_object(old.inputs)), fields_of(_object(goal.inputs))
        changed = sorted({p for p in before.keys() | after.keys() if before.get(p) != after.get(p)})
        claim = goal.inputs.get("kind") == "PersistentVolumeClaim"
        replace = [p for p in changed if p[:2] in (("metadata", "name"), ("metadata", "namespace"))
                   or (claim and p[:2] in CLAIM_FORCE_NEW)]
        renamed = any(p[:2] == ("metadata", "name") for p in changed)
        return Diff([".".join(p) for p in changed], [".".join(p) for p in replace],
                    delete_before_replace=bool(replace) and not renamed)

    def delete(self, entry: Entry, config: dict[str, Any]) -> None:
        self.cluster.delete(Cluster.key(_object(entry.outputs)))

    def read(self, entry: Entry, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
        live = self.cluster.objects.get(Cluster.key(_object(entry.outputs)))
        if live is None:
            return None
        return {**_outputs(live), FIELD_MANAGER: entry.outputs.get(FIELD_MANAGER)}, entry.inputs

    def get(self, type_: str, ident: str, config: dict[str, Any]) -> dict[str, Any]:
        if ident not in self.cluster.crds:
            raise StepFailed(f"resource '{ident}' does not exist")  # a read's 404: the engine's message
        return read_crd(ident, self.cluster.crds[ident])

    def config_replaces(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """`DiffConfig`: only a different active cluster (kubeconfig, context, cluster) replaces."""
        return any(old.get(k) and new.get(k) and old[k] != new[k] for k in ("kubeconfig", "context", "cluster"))

    # --- awaits ------------------------------------------------------------------------------
    def _await(self, obj: dict[str, Any], live: Object, creating: bool) -> str:
        """Why the await failed, or "" once the object is ready."""
        if annotation_true(obj, "pulumi.com/skipAwait"):
            return ""
        kind = obj["kind"]
        if kind == "PersistentVolumeClaim":
            return self._claim(live, creating)
        if kind == "Deployment":
            return self._pods(obj, live)
        wait_for = (obj["metadata"].get("annotations") or {}).get("pulumi.com/waitFor", "")
        if kind == "LeaderWorkerSet" and wait_for.startswith("condition="):
            return self._leader_worker_set(obj, live, wait_for.removeprefix("condition="))
        return ""

    def _claim(self, claim: Object, creating: bool) -> str:
        cluster = self.cluster
        if cluster.bind_mode(claim) == "Immediate":
            claim.status["phase"] = "Bound"  # the class's provisioner binds it at once
        mode = cluster.bind_mode(claim) if cluster.may_read_storage_classes else ""
        phase = cluster.claim_phase(claim)
        if phase == "Bound" or (mode == WAIT_FOR_FIRST_CONSUMER and phase == "Pending"):
            return ""
        return f"PersistentVolumeClaim {claim.body['metadata']['name']} is {phase}, not Bound, after {CLAIM_AWAIT}"

    def _pods(self, obj: dict[str, Any], live: Object) -> str:
        """A Deployment's pods: scheduled once their claims exist (which binds a WaitForFirstConsumer
        claim), available when their image serves."""
        pod = obj["spec"]["template"]["spec"]
        ns = obj["metadata"]["namespace"]
        for volume in pod.get("volumes", []):
            claim_name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
            if claim_name is None:
                continue
            claim = self.cluster.objects.get(("PersistentVolumeClaim", ns, claim_name))
            if claim is None:
                return f'Failed to bind PersistentVolumeClaim(s): "{claim_name}" (not found)'
            if not self.cluster.provisions(claim):  # Pending until the workload's create times out
                return f'Failed to bind PersistentVolumeClaim(s): "{claim_name}"'
            claim.status["phase"] = "Bound"
        if any(c["image"] in self.cluster.never_ready for c in pod["containers"]):
            return "the Deployment's pods never became available"
        live.status = {"availableReplicas": obj["spec"].get("replicas", 1)}
        return ""

    def _leader_worker_set(self, obj: dict[str, Any], live: Object, want: str) -> str:
        """The statuses the controller writes after a spec change, checked by the await in turn."""
        recorded = _version(self.cluster.lws_release) >= (0, 9)  # makeCondition sets ObservedGeneration
        gen = live.generation
        template = obj["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
        ready = not any(c["image"] in self.cluster.never_ready for c in template["containers"])
        statuses = [copy.deepcopy(live.status),
                    _lws_status("Available", "False", gen if recorded else None),
                    _lws_status("Available", "True" if ready else "False", gen if recorded else None)]
        for i, status in enumerate(statuses):
            if check_condition(status, gen, want):
                live.status = statuses[-1]
                if i < len(statuses) - 1:
                    self.cluster.returned_early.append(obj["metadata"]["name"])
                return ""
        live.status = statuses[-1]
        return f"the LeaderWorkerSet's {want} condition never held"


def _version(tag: str) -> tuple[int, ...]:
    return tuple(int(part) for part in tag.removeprefix("v").split("."))


def _lws_status(kind: str, value: str, generation: int | None) -> dict[str, Any]:
    condition: dict[str, Any] = {"type": kind, "status": value}
    status: dict[str, Any] = {"conditions": [condition]}
    if generation is not None:
        condition["observedGeneration"] = status["observedGeneration"] = generation
    return status


def _forced(obj: dict[str, Any], config: dict[str, Any]) -> bool:
    return annotation_true(obj, "pulumi.com/patchForce") or config.get("enablePatchForce") == "true"


def _object(inputs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in inputs.items() if not k.startswith("__") and k not in ("status",)}


def _outputs(live: Object) -> dict[str, Any]:
    body = copy.deepcopy(live.body)
    body["metadata"] = {**body.get("metadata", {}), "uid": str(live.uid), "generation": live.generation}
    return {**body, "status": copy.deepcopy(live.status)}


def cluster_engine(cluster: Cluster, stack: str = "a100-k8s") -> Engine:
    """A stack's engine whose Kubernetes objects go to `cluster`."""
    return Engine({"kubernetes": KubernetesProvider(cluster)}, stack=stack)
