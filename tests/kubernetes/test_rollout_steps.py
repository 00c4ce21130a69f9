"""How many model loads an update of the workload waits for, read from the object's strategy as
Kubernetes applies it (apps/v1 DeploymentStrategy; LeaderWorkerSet v1 RolloutStrategy): the update
timeout is one load per step, so a step undercounted fails `pulumi up` part-way through a rollout.

The renderer emits today only `Recreate` with one replica and `maxUnavailable: 1`; these hold for
any strategy it may emit (a configurable batch, a Recreate of several replicas)."""

from __future__ import annotations

from typing import Any

import pytest

from components.kubernetes.vllm_kubernetes import rollout_steps


def _deployment(replicas: int, strategy: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "Deployment", "spec": {"replicas": replicas, "strategy": strategy}}


def _lws(replicas: int, strategy: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "LeaderWorkerSet", "spec": {"replicas": replicas, "rolloutStrategy": strategy}}


@pytest.mark.parametrize(("workload", "steps"), [
    # Recreate stops every pod, then starts them all: one load however many replicas
    (_deployment(3, {"type": "Recreate"}), 1),
    # 4 replicas, 2 unavailable at a time: 2 batches, each loading the model
    (_deployment(4, {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 2}}), 2),
    # 5 replicas, 2 at a time: 2 + 2 + 1 = 3 batches
    (_lws(5, {"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxUnavailable": 2, "maxSurge": 0}}), 3),
    (_lws(3, {"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0}}), 3),
    # a percentage or 0 (surge-only) is never counted as fewer steps than one replica at a time
    (_deployment(4, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%"}}), 4),
    (_deployment(4, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}), 4),
    # Kubernetes' defaults: RollingUpdate, maxUnavailable 25% of 1 replica (rounded down, at least 1)
    ({"kind": "Deployment", "spec": {}}, 1),
])
def test_an_update_waits_one_load_per_batch_of_replicas(workload: dict[str, Any], steps: int) -> None:
    assert rollout_steps(workload) == steps
