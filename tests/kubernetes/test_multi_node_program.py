"""The program under Pulumi's mocks for a server across nodes, and for several replicas."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import RunProgram, shipped_stack
from tests.kubernetes.lws_schema import lws_errors
from tests.kubernetes.multi_node_stacks import two_node_spec, two_node_values
from tests.pulumi_harness import ProgramFailed, _Mocks, as_manifest
from vllm_serving.render.kubernetes.leader_worker_set import CRD_NAME, INSTALL_COMMAND
from vllm_serving.render.kubernetes.objects import kubernetes_objects
from vllm_serving.render.kubernetes.parts import SECRETS_CHECKSUM
from vllm_serving.views.kubernetes_plan import planned_kubernetes_resources

LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
PROVIDERS = "pulumi:providers:"
SENTINEL = "SENTINEL-apikey-123"


def _config(**sections: Any) -> dict[str, Any]:
    values = two_node_values(**sections)
    return {k: v for k, v in values.items() if not k.endswith(":apiKey")}


def test_registers_the_rendered_leader_worker_set(program: RunProgram) -> None:
    run = program(_config(), stack="llama-2n", secrets={"apiKey": SENTINEL})
    captured = [as_manifest(r.inputs) for r in run.resources if r.type.startswith("kubernetes:")]
    rendered = kubernetes_objects(two_node_spec(secrets=("apiKey",)), {"apiKey": SENTINEL})
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
    assert sorted(captured, key=key) == sorted(rendered, key=key)
    lws = run.one(LWS_TYPE)
    assert lws_errors(as_manifest(lws.inputs)) == []
    assert run.of_type("apps/v1:Deployment") == []
    # By hand: Llama-3.1-405B in bf16, 405e9 x 2 B ~= 754 GiB, loads in 300 s + 15 s/GiB x 754 GiB
    # = 11,610 s -> 11,640 s in whole minutes; + 900 s for scheduling and the image pull = 12,540 s;
    # + Pulumi's 300 s margin = 12,840 s = 214 min.
    assert lws.custom_timeouts["create"] == "214m"
    assert lws.custom_timeouts["update"] == lws.custom_timeouts["create"]
    # a new API key rolls the groups: the checksum sits on the leader's pod template
    leader = lws.inputs["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    assert SECRETS_CHECKSUM in leader["metadata"]["annotations"]
    assert SENTINEL not in json.dumps(as_manifest(lws.inputs))


def test_the_crd_is_read_and_the_plan_lists_what_is_registered(program: RunProgram) -> None:
    run = program(_config(), stack="llama-2n")
    assert [(t, i) for t, _, i in run.reads] == [(CRD_TYPE, CRD_NAME)]
    assert any(INSTALL_COMMAND in line for line in run.infos)
    # the read sits under the component in `pulumi preview`'s tree, the install line beside it
    component = run.one("vllm-serving:kubernetes:VllmKubernetes")
    (parent,) = run.read_parents.values()
    assert parent.endswith(f"vllm-serving:kubernetes:VllmKubernetes::{component.name}"), parent
    (hint,) = [entry for entry in run.logged if INSTALL_COMMAND in entry.message]
    assert hint.urn.endswith(f"CustomResourceDefinition::{component.name}-lws-crd"), hint.urn
    spec = two_node_spec()
    assert run.applied() == sorted(planned_kubernetes_resources(spec))


def test_a_cluster_without_leader_worker_set_gets_nothing(program: RunProgram,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    answer = _Mocks.new_resource

    def no_crd(self: _Mocks, args: Any) -> tuple[str, dict[str, Any]]:
        if args.typ == CRD_TYPE:
            raise LookupError(f"resource '{args.resource_id}' does not exist")
        return answer(self, args)

    monkeypatch.setattr(_Mocks, "new_resource", no_crd)
    with pytest.raises(ProgramFailed) as failed:
        program(_config(), stack="llama-2n", preview=True)
    assert CRD_NAME in str(failed.value)
    # components and providers only: nothing reaches the cluster
    assert [r.type for r in failed.value.resources if not r.type.startswith(("vllm-serving:", PROVIDERS))] == []


def test_outputs_describe_the_layout(program: RunProgram) -> None:
    run = program(_config(), stack="llama-2n")
    scale = run.outputs["scaleOut"]
    assert scale["workload"] == "LeaderWorkerSet vllm-group"
    assert (scale["nodesPerReplica"], scale["gpusPerPod"], scale["pods"], scale["gpus"]) == (2, 8, 2, 16)
    assert "note" not in scale  # one engine: one KV cache
    assert run.outputs["serviceName"] == "vllm"


def test_replicas_say_each_has_its_own_kv_cache(program: RunProgram) -> None:
    config = shipped_stack("a100-k8s")
    config["vllm-serving:kubernetes"] = {**config["vllm-serving:kubernetes"], "replicas": 3,
                                         "cache": {"accessMode": "ReadWriteMany"}}
    run = program(config, stack="a100-k8s")
    scale = run.outputs["scaleOut"]
    assert scale["workload"] == "Deployment vllm" and scale["engines"] == 3
    assert scale["kvCacheTokensTotal"] == 3 * scale["kvCacheTokensPerEngine"]
    assert "own KV cache" in scale["note"]
    budget = run.one("policy/v1:PodDisruptionBudget").inputs
    assert budget["spec"]["maxUnavailable"] == 1
    assert run.one("core/v1:Service").inputs["spec"]["selector"] == \
        run.one("apps/v1:Deployment").inputs["spec"]["selector"]["matchLabels"]
