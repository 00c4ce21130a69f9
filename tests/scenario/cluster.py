"""A Kubernetes cluster and pulumi-kubernetes, as their source behaves, for the scenario engine.

pulumi-kubernetes v4.32.0 (the files below are unchanged up to the newest commit stored):
- Create (provider/pkg/await/await.go `Creation`, line 153): a server-side apply when the provider
  sets `upsertExistingObjects` (line 190), else a plain Create, which fails on an existing object
  with AlreadyExists (line 279). The apply's field manager is the resource's own, a new random one
  for each new resource (provider.go `fieldManagerName`, line 2883); it conflicts with another
  manager's field of a different value unless `pulumi.com/patchForce` (await.go `patchForce`, 1031).
- Update: `fixCSAFieldManagers` (line 858) takes over what the managers `kubectl`,
  `before-first-apply` and pulumi-kubernetes' own client-side one own, then the same apply
  (`ssaUpdate`, line 643): `kubectl-scale` and `kubectl-edit` are not taken over.
- Awaits (metadata/overrides.go `ReadyCondition`, line 100): `pulumi.com/skipAwait` none; `waitFor`
  conditions as kubectl checks them (await/condition/kubectl.go `checkCondition`, line 30: a
  condition or status naming an older generation does not count, one naming none does); a claim
  until Bound, or Pending under a WaitForFirstConsumer class it may read, for 5 minutes
  (await/awaiters.go line 288); a Deployment until its pods are available, its claims bound
  (await/deployment.go line 728), and a timeout names the claims that never bound ("Failed to bind
  PersistentVolumeClaim(s)", lines 859-863). A failed await keeps the object with an init error.
- Diff (provider/diff.go `forceNewProperties`): a claim's access modes, class, selector and volume
  are replaced, delete-first for a named object (provider.go line 1647).
The LeaderWorkerSet controller (kubernetes-sigs/lws pkg/controllers/leaderworkerset_controller.go
`makeCondition`) records the generation on its conditions from v0.9.0, none in v0.8.0.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.scenario.state import StepFailed

WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
LWS_CRD = "leaderworkersets.leaderworkerset.x-k8s.io"
TAKEN_OVER = ("kubectl", "before-first-apply", "pulumi-kubernetes")  # fixCSAFieldManagers, by name
CLAIM_FORCE_NEW = (("spec", "accessModes"), ("spec", "selector"), ("spec", "storageClassName"), ("spec", "volumeName"))
_NOT_FIELDS = (("status",), ("metadata", "uid"), ("metadata", "generation"))


Path_ = tuple[str, ...]


def fields_of(obj: Any, prefix: Path_ = ()) -> dict[Path_, Any]:
    """An object's fields as paths (keys may hold dots: `pulumi.com/skipAwait`) to their values;
    a list is one field."""
    if not isinstance(obj, dict) or not obj:
        return {prefix: obj} if prefix else {}
    found: dict[Path_, Any] = {}
    for key, value in obj.items():
        path = (*prefix, key)
        if not key.startswith("__") and path not in _NOT_FIELDS:
            found.update(fields_of(value, path))
    return found


def _set(body: dict[str, Any], path: Path_, value: Any) -> None:
    *parents, leaf = path
    for key in parents:
        body = body.setdefault(key, {})
    body[leaf] = copy.deepcopy(value)


@dataclass
class Object:
    body: dict[str, Any]
    uid: int
    managers: dict[str, dict[Path_, Any]]
    generation: int = 1
    status: dict[str, Any] = field(default_factory=dict)

    @property
    def annotations(self) -> dict[str, str]:
        found: dict[str, str] = self.body.get("metadata", {}).get("annotations") or {}
        return found


@dataclass
class Cluster:
    """The objects by (kind, namespace, name); what the cluster's own controllers would do."""

    objects: dict[tuple[str, str, str], Object] = field(default_factory=dict)
    crds: dict[str, Path | None] = field(default_factory=lambda: {LWS_CRD: None})
    """CRDs installed, by name: the vendored file (None: the one named after it in tests/fixtures/crds)."""
    storage_classes: dict[str, str] = field(default_factory=lambda: {"standard": "Immediate"})
    default_class: str = "standard"
    may_read_storage_classes: bool = True
    lws_release: str = "v0.10.0"
    never_ready: set[str] = field(default_factory=set)
    """Images whose pods never turn ready."""
    returned_early: list[str] = field(default_factory=list)
    """Workloads whose await ended before their new pods were ready."""
    uids: int = 0

    @staticmethod
    def key(obj: dict[str, Any]) -> tuple[str, str, str]:
        meta = obj["metadata"]
        return obj["kind"], meta.get("namespace", ""), meta["name"]

    def find(self, kind: str, name: str) -> Object:
        (found,) = [o for (k, _, n), o in self.objects.items() if (k, n) == (kind, name)]
        return found

    def create(self, obj: dict[str, Any], manager: str) -> Object:
        self.uids += 1
        body = {k: copy.deepcopy(v) for k, v in obj.items() if not k.startswith("__")}
        if body["kind"] == "PersistentVolumeClaim":
            spec = body.setdefault("spec", {})
            spec.setdefault("storageClassName", self.default_class)  # DefaultStorageClass admission
        created = Object(body, self.uids, {manager: fields_of(obj)})
        self.objects[self.key(obj)] = created
        return created

    def apply(self, obj: dict[str, Any], manager: str, force: bool) -> Object:
        """A server-side apply: creates, or merges into the live object with field ownership."""
        live = self.objects.get(self.key(obj))
        if live is None:
            return self.create(obj, manager)
        leaves = fields_of(obj)
        conflicts = sorted(f"{'.'.join(path)} (owned by {other})" for other, owned in live.managers.items()
                           if other != manager for path, value in owned.items()
                           if path in leaves and leaves[path] != value)
        if conflicts and not force:
            raise StepFailed(f"server-side apply field conflict detected: The resource managed by field manager "
                             f"{manager!r} had an apply conflict: {', '.join(conflicts)}")
        for other, owned in live.managers.items():
            for path in [p for p in owned if other != manager and p in leaves and leaves[p] != owned[p]]:
                del owned[path]
        before = fields_of(live.body)
        for path, value in leaves.items():
            _set(live.body, path, value)
        if any(before.get(p) != v for p, v in leaves.items() if p[0] == "spec"):
            live.generation += 1
        live.managers[manager] = leaves
        return live

    def kubectl(self, kind: str, name: str, field_path: str, value: Any, manager: str) -> None:
        """`kubectl scale` (`kubectl-scale`), `kubectl edit` (`kubectl-edit`): an update that takes the field."""
        live, path = self.find(kind, name), tuple(field_path.split("."))
        for owned in live.managers.values():
            owned.pop(path, None)
        _set(live.body, path, value)
        live.managers.setdefault(manager, {})[path] = value
        if path[0] == "spec":
            live.generation += 1

    def delete(self, key: tuple[str, str, str]) -> None:
        self.objects.pop(key, None)
        if key[0] == "Namespace":  # the namespace controller deletes what is in it
            for inside in [k for k in self.objects if k[1] == key[2]]:
                del self.objects[inside]

    def claim_phase(self, claim: Object) -> str:
        return str(claim.status.get("phase", "Pending"))

    def provisions(self, claim: Object) -> bool:
        """A claim binds only through a class the cluster has (its own, else the default)."""
        return (claim.body["spec"].get("storageClassName") or self.default_class) in self.storage_classes

    def bind_mode(self, claim: Object) -> str:
        return self.storage_classes.get(claim.body["spec"].get("storageClassName", ""), "Immediate")


def annotation_true(obj: dict[str, Any], annotation: str) -> bool:
    return (obj.get("metadata", {}).get("annotations") or {}).get(annotation) == "true"


def check_condition(status: dict[str, Any], generation: int, kind: str, want: str = "True") -> bool:
    """await/condition/kubectl.go `checkCondition`: the first condition of that type decides."""
    for condition in status.get("conditions") or []:
        if condition.get("type", "").lower() != kind.lower():
            continue
        observed = condition.get("observedGeneration", status.get("observedGeneration"))
        if observed is not None and observed < generation:
            return False
        return str(condition.get("status", "")).lower() == want.lower()
    return False
