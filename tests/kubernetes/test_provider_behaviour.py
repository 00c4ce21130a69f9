"""The Kubernetes objects as pulumi-kubernetes awaits, diffs and deletes them, one test per rule.

Source: pulumi-kubernetes v4.32.0 (the newest release stored here; uv.lock pins 4.34.2),
provider/pkg/metadata/overrides.go, provider/pkg/await/, provider/pkg/provider/diff.go and
provider.go; the LeaderWorkerSet controller of kubernetes-sigs/lws v0.10.0. Each rule's function is
named in docs/provider-behaviour.md. Mocks run no provider: each test checks what the provider reads.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import RunProgram, shipped_stack
from tests.crd_schema import LWS_V0_8, read_crd
from tests.kubernetes.multi_node_stacks import two_node_values
from tests.observability.helpers import ON
from tests.pulumi_harness import ProgramFailed, ProgramRun, Registered, _Mocks
from tests.stack_builders import stack_values

API_KEY = "SENTINEL-api-key-provider-rules-0001"
LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
WAIT_FOR, SKIP_AWAIT = "pulumi.com/waitFor", "pulumi.com/skipAwait"
# What the LeaderWorkerSet controller sets (lws v0.10.0 api/leaderworkerset/v1/leaderworkerset_types.go,
# pkg/controllers/leaderworkerset_controller.go `updateConditions`): the condition type meaning
# "every group ready on the current revision", always with status True and the object's generation.
LWS_READY_CONDITION = "Available"
LWS_CONDITIONS = ("Available", "Progressing", "UpdateInProgress")
RWX = {"cache": {"accessMode": "ReadWriteMany"}}  # several pods share the compile cache


def _wait_for(value: str) -> list[tuple[str, str, str]]:
    """The annotation read as the provider reads it (metadata/overrides.go `ReadyCondition`, await/
    condition/custom.go `NewCustom`): a JSON list or one expression; `condition=Type[=Status]`
    (Status defaults to True) or `jsonpath=...`; anything else fails the create."""
    try:
        expressions = json.loads(value)
    except json.JSONDecodeError:
        expressions = [value]
    parsed = []
    for expr in expressions:
        kind, _, rest = expr.partition("=")
        assert kind in ("condition", "jsonpath"), f"the provider refuses {expr!r}"
        condition, _, status = rest.partition("=")
        parsed.append((kind, condition, status or "True"))
    return parsed


def _minutes(timeout: str) -> int:
    assert timeout.endswith("m"), timeout
    return int(timeout.removesuffix("m"))


def _rolled_in_turn(workload: Registered) -> int:
    """Replicas an update replaces one batch after another, read from the object's own strategy."""
    spec = workload.inputs["spec"]
    strategy = spec.get("strategy") or spec["rolloutStrategy"]
    if strategy["type"] == "Recreate":
        return 1
    batch = (strategy.get("rollingUpdate") or strategy["rollingUpdateConfiguration"])["maxUnavailable"]
    return -(-int(spec["replicas"]) // int(batch))


def _lws_run(program: RunProgram, **kubernetes: Any) -> ProgramRun:
    values = two_node_values(kubernetes=kubernetes) if kubernetes else two_node_values()
    run: ProgramRun = program({k: v for k, v in values.items() if not k.endswith(":apiKey")}, stack="llama-2n")
    return run


def test_the_leader_worker_set_waits_until_every_group_is_ready(program: RunProgram) -> None:
    # Pulumi has no await logic of its own for a custom resource: without a readable waitFor it
    # would report success at once; skipAwait would win over waitFor
    annotations = _lws_run(program).one(LWS_TYPE).inputs["metadata"]["annotations"]
    assert SKIP_AWAIT not in annotations
    conditions = _wait_for(annotations[WAIT_FOR])
    assert all(kind == "condition" and name in LWS_CONDITIONS for kind, name, _ in conditions)
    assert ("condition", LWS_READY_CONDITION, "True") in conditions


@pytest.mark.parametrize("kind", ["Deployment", "LeaderWorkerSet"])
def test_a_rolling_update_has_a_model_load_per_replica_in_turn(program: RunProgram, kind: str) -> None:
    # The provider awaits a whole rollout under one timer; replicas replaced one at a time load the
    # model one after the other. A create starts them all at once.
    # One rollout step by hand: the load (300 s + 15 s/GiB of weights, up to whole minutes) plus 900 s
    # to schedule the pod and pull the image. a100-k8s: Qwen3.6-27B-FP8, ~28.3 GiB -> 725 s -> 780 s,
    # 1680 s. Two-node Llama-3.1-405B: 405e9 x 2 B ~= 754 GiB -> 11,610 s -> 11,640 s, 12,540 s.
    if kind == "Deployment":
        run = program(stack_values(kubernetes={"replicas": 3, **RWX}), stack="a100-k8s", secrets={"apiKey": API_KEY})
        workload, load = run.one("apps/v1:Deployment"), 1680
    else:
        workload, load = _lws_run(program, replicas=2).one(LWS_TYPE), 12540
    steps = _rolled_in_turn(workload)
    create, update = (_minutes(workload.custom_timeouts[op]) for op in ("create", "update"))
    assert steps > 1
    assert create * 60 > load
    assert update * 60 > steps * load, f"{update} min for {steps} loads of {load} s"


def test_one_replica_is_recreated_within_one_load(program: RunProgram) -> None:
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={"apiKey": API_KEY})
    deployment = run.one("apps/v1:Deployment")
    assert _rolled_in_turn(deployment) == 1
    assert deployment.custom_timeouts["update"] == deployment.custom_timeouts["create"]


def test_a_changed_dashboard_replaces_its_config_map_delete_first(program: RunProgram) -> None:
    # The provider replaces a ConfigMap whose data changed (diff.go, unless enableConfigMapMutable),
    # delete-first when it keeps its name (provider.go `Diff`). Create-first with the same name would
    # fail (AlreadyExists); a generated name would let Grafana's sidecar see two ConfigMaps writing
    # the same dashboard file, then the old one's deletion remove it. And a delete-first
    # replacement also deletes first whatever takes an input from it.
    config = {**shipped_stack("a100-k8s"), "vllm-serving:observability": {"grafanaDashboard": True}}
    run = program(config, stack="a100-k8s", secrets={"apiKey": API_KEY})
    dashboard = run.one("core/v1:ConfigMap")
    assert dashboard.inputs["metadata"]["name"]
    assert not (dashboard.delete_before_replace_defined and not dashboard.delete_before_replace)
    urn_tail = f"kubernetes:core/v1:ConfigMap::{dashboard.name}"
    assert not [r.name for r in run.resources if any(u.endswith(urn_tail) for u in r.dependencies)]


def test_the_disruption_budget_changes_in_place(program: RunProgram) -> None:
    # the provider replaces a policy/v1beta1 budget on any spec change (diff.go `podDisruptionBudget`),
    # leaving the servers without one meanwhile; a policy/v1 budget is patched
    run = program(stack_values(kubernetes={"replicas": 2, **RWX}), stack="a100-k8s", secrets={"apiKey": API_KEY})
    (budget,) = [r for r in run.resources if r.type.endswith(":PodDisruptionBudget")]
    assert budget.type == "kubernetes:policy/v1:PodDisruptionBudget"


def test_a_crd_is_read_never_owned(program: RunProgram) -> None:
    # A read resource is External: destroy leaves it alone (pulumi step.go `DeleteStep`). A
    # registered CRD would be deleted by `pulumi destroy`, and with it every LeaderWorkerSet,
    # ServiceMonitor and PrometheusRule in the cluster, other teams' too.
    config = {**shipped_stack("a100-k8s"), "vllm-serving:observability": ON}
    for run in (_lws_run(program), program(config, stack="a100-k8s", secrets={"apiKey": API_KEY})):
        assert run.reads and all(t == CRD_TYPE for t, _, _ in run.reads)
        assert not [r.name for r in run.resources if r.type == CRD_TYPE]


def test_an_outdated_leader_worker_set_fails_the_preview(program: RunProgram, monkeypatch: pytest.MonkeyPatch) -> None:
    # the CRD read runs in previews too: the refusal shows in the PR's `pulumi preview`, before any
    # object; a LeaderWorkerSet before v0.9.0 would let `condition=Available` pass on a stale condition
    answer = _Mocks.new_resource

    def old_lws(self: _Mocks, args: Any) -> tuple[str, dict[str, Any]]:
        if args.typ == CRD_TYPE:
            return args.resource_id, read_crd(args.resource_id, LWS_V0_8)
        return answer(self, args)

    monkeypatch.setattr(_Mocks, "new_resource", old_lws)
    values = two_node_values()
    with pytest.raises(ProgramFailed) as failed:
        program({k: v for k, v in values.items() if not k.endswith(":apiKey")}, stack="llama-2n", preview=True)
    assert "kubernetes.nodes" in str(failed.value) and "v0.9.0" in str(failed.value)
    assert [r.type for r in failed.value.resources if r.type.startswith("kubernetes:")] == []
