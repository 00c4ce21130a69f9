"""A server that spans nodes (`kubernetes.nodes` > 1): a LeaderWorkerSet instead of a Deployment.

vLLM's own launcher across nodes (vLLM docs, serving/parallelism_scaling.md "Running vLLM with
MultiProcessing"; the flags in vllm/engine/arg_utils.py, the workers in
vllm/entrypoints/cli/serve.py `run_headless`): every pod runs the stack's argv, plus
    leader:  --nnodes K --node-rank 0 --master-addr $(LWS_LEADER_ADDRESS)
    worker:  --nnodes K --node-rank $(LWS_WORKER_INDEX) --master-addr $(LWS_LEADER_ADDRESS) --headless
LeaderWorkerSet (kubernetes-sigs/lws v0.10.0, pkg/utils/pod/pod_utils.go `AddLWSVariables`) puts
LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and LWS_WORKER_INDEX first in every container's env, so the
kubelet expands the `$(...)` references in args. Only the leader serves HTTP: the port, probes,
scrape annotations and the Service are its alone; every pod gets the GPUs, /dev/shm, the
weights and the node selector. One group of K pods is one server; `replicas` counts groups.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Mapping

from vllm_serving.findings import Finding, Severity, config_key
from vllm_serving.render.kubernetes.parts import Obj, labels, object_meta
from vllm_serving.render.kubernetes.pod_names import CONTAINER, HOST_IP_ENV, group_name, selector
from vllm_serving.render.kubernetes.preflight import preflight_init_containers
from vllm_serving.render.kubernetes.workload import (
    CONTAINER_SECURITY,
    pod_gpus,
    pod_spec,
    server_annotations,
)
from vllm_serving.spec import ServingSpec

API_VERSION = "leaderworkerset.x-k8s.io/v1"
KIND = "LeaderWorkerSet"
CRD_NAME = "leaderworkersets.leaderworkerset.x-k8s.io"
LWS_RELEASE = "v0.10.0"
"""The LeaderWorkerSet release whose CRD the tests validate against (tests/fixtures/crds/)."""
INSTALL_COMMAND = ("kubectl apply --server-side -f "
                   f"https://github.com/kubernetes-sigs/lws/releases/download/{LWS_RELEASE}/manifests.yaml")
OBSERVED_GENERATION_RELEASE = "v0.9.0"
"""The first LeaderWorkerSet release that records which generation its status describes:
`status.observedGeneration` in the CRD (lws #807) and on every condition (pkg/controllers/
leaderworkerset_controller.go `makeCondition`; v0.8.0's sets none)."""
# Set by the LWS controller on every pod (api/leaderworkerset/v1/leaderworkerset_types.go); the
# leader of each group is worker 0.
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
LEADER_ADDRESS = "$(LWS_LEADER_ADDRESS)"
WORKER_INDEX = "$(LWS_WORKER_INDEX)"
API_KEY_ENV = "VLLM_API_KEY"
MULTUS_NETWORKS = "k8s.v1.cni.cncf.io/networks"


def leader_args(spec: ServingSpec) -> list[str]:
    return [*spec.args, "--nnodes", str(spec.settings.kubernetes.nodes), "--node-rank", "0",
            "--master-addr", LEADER_ADDRESS]


def worker_args(spec: ServingSpec) -> list[str]:
    return [*spec.args, "--nnodes", str(spec.settings.kubernetes.nodes), "--node-rank", WORKER_INDEX,
            "--master-addr", LEADER_ADDRESS, "--headless"]


def _group_pod(spec: ServingSpec, leader: bool) -> Obj:
    """The pod spec of the leader or of a worker: its own IP, RDMA if asked. `pod_spec` already
    gives every container, the preflight too, one node's GPUs (`workload.pod_gpus`)."""
    k = spec.settings.kubernetes
    pod = pod_spec(spec)  # built afresh: changed in place here
    server = pod["containers"][0]
    server["args"] = leader_args(spec) if leader else worker_args(spec)
    rdma_env = [] if k.rdma is None else [{"name": n, "value": v} for n, v in sorted(k.rdma.nccl_env.items())]
    env = [HOST_IP_ENV, *rdma_env, *(e for e in server.pop("env", []) if leader or e["name"] != API_KEY_ENV)]
    if k.rdma is not None:
        if k.rdma.resource is not None:
            limits = server.setdefault("resources", {}).setdefault("limits", {})
            limits[k.rdma.resource] = str(k.rdma.count)
        # GPUDirect RDMA pins memory pages (vLLM docs: the IPC_LOCK capability)
        server["securityContext"] = {**CONTAINER_SECURITY, "capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]}}
    if not leader:  # a headless worker has no HTTP server to probe or expose
        for key in ("ports", "startupProbe", "readinessProbe", "livenessProbe"):
            server.pop(key, None)
    ordered: Obj = {}
    for name, item in server.items():
        if name == "resources":  # env where a Deployment's container has it
            ordered["env"] = env
        ordered[name] = item
    pod["containers"][0] = ordered
    if "initContainers" in pod:  # the preflight checks this pod's own argv (LWS sets its env there too)
        pod["initContainers"] = preflight_init_containers(spec, ordered, pod_gpus(spec))
    return pod


def _template(spec: ServingSpec, leader: bool, secrets: Mapping[str, str] | None) -> Obj:
    k = spec.settings.kubernetes
    annotations = (server_annotations(spec, secrets) if leader
                   else {"kubectl.kubernetes.io/default-container": CONTAINER})
    if k.rdma is not None and k.rdma.networks is not None:
        annotations[MULTUS_NETWORKS] = k.rdma.networks
    component = "inference-server" if leader else "inference-worker"
    return {"metadata": {"labels": labels(spec, component), "annotations": annotations},
            "spec": _group_pod(spec, leader)}


def leader_worker_set(spec: ServingSpec, secrets: Mapping[str, str] | None = None) -> Obj:
    """The LeaderWorkerSet: `replicas` groups of `nodes` pods, replaced one group at a time."""
    k = spec.settings.kubernetes
    meta = object_meta(spec, group_name(spec), "inference-server")
    # Pulumi has no built-in readiness for a custom resource: wait for the controller's own
    # Available condition (every group's leader pod and workers ready on the current revision; it
    # carries the generation, so a stale one is not taken after an update), within the
    # component's timeouts (docs/provider-behaviour.md).
    meta["annotations"]["pulumi.com/waitFor"] = "condition=Available"
    lws: Obj = {
        "apiVersion": API_VERSION, "kind": KIND, "metadata": meta,
        "spec": {
            "replicas": k.replicas,
            "leaderWorkerTemplate": {
                "size": k.nodes,
                # one failed pod leaves its group's process group broken: restart the group together
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": _template(spec, True, secrets),
                "workerTemplate": _template(spec, False, secrets),
            },
            # a surge group would ask for nodes x GPUs the cluster does not have: never surge
            "rolloutStrategy": {"type": "RollingUpdate",
                                "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0}},
            "startupPolicy": "LeaderCreated",
        },
    }
    # a copy that shares no object between the pods: YAML would print a shared one as an alias
    copied: Obj = json.loads(json.dumps(lws))
    return copied


def stale_condition_finding(status_fields: Collection[str]) -> Finding | None:
    """What is wrong with the cluster's LeaderWorkerSet, from the fields of its CRD's status schema.

    pulumi-kubernetes takes a condition as current unless it, or the status, names an older
    generation (provider/pkg/await/condition/kubectl.go `checkCondition`); a status that names
    none passes. Before v0.9.0 the controller records no generation, so after an update the
    previous rollout's `Available` satisfies `condition=Available` at once: `pulumi up` ends
    before a new pod is ready. The CRD accepts the object all the same: nothing else would stop it.
    """
    if "observedGeneration" in status_fields:
        return None
    return Finding(
        "k8s-lws-outdated", Severity.ERROR, config_key("kubernetes", "nodes"),
        f"the cluster's LeaderWorkerSet ({CRD_NAME}) predates {OBSERVED_GENERATION_RELEASE}: its status "
        "records no generation, so `pulumi up` would take the previous rollout's Available condition "
        "and return before the new pods are ready",
        f"upgrade LeaderWorkerSet to {OBSERVED_GENERATION_RELEASE} or later ({INSTALL_COMMAND}), or serve "
        "from one node (kubernetes.nodes: 1)")


def leader_service(service: Obj) -> Obj:
    """The stack's Service, sending requests to the leaders only (workers run no HTTP server)."""
    out = copy.deepcopy(service)
    out["spec"]["selector"] = {**out["spec"]["selector"], WORKER_INDEX_LABEL: "0"}
    return out


def group_network_policy(policy: Obj | None, spec: ServingSpec) -> Obj | None:
    """The stack's NetworkPolicy, also admitting the group's own traffic: torch.distributed, NCCL
    and vLLM's message queues between the pods of a server, on ports vLLM picks at start-up."""
    if policy is None:
        return None
    out = copy.deepcopy(policy)
    out["spec"]["ingress"].append({"from": [{"podSelector": {"matchLabels": selector(spec)}}]})
    return out


def pod_template(workload: Obj, body: Obj | None = None) -> Obj:
    """The pod template that serves the API: a Deployment's, or a LeaderWorkerSet's leader's;
    looked up in `body` (a copy of the workload's spec) when given."""
    spec = workload["spec"] if body is None else body
    if workload["kind"] == KIND:
        template: Obj = spec["leaderWorkerTemplate"]["leaderTemplate"]
        return template
    deployment_template: Obj = spec["template"]
    return deployment_template
