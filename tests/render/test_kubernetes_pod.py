"""The server pod as the kubelet and the scheduler read it: its security context, /dev/shm, what a
CPU pod asks for, and the names of a multi-node server's pods. Expected values come from
Kubernetes' rules (Pod Security Standards, label and name syntax), docs/kubernetes.md and
docs/rules.md, and hand arithmetic, never from the renderer."""

from __future__ import annotations

import copy
import re
from typing import Any

import kubernetes_validate
import pytest

from tests.kubernetes.cluster_version import KUBERNETES_VERSION
from tests.kubernetes.multi_node_stacks import two_node_spec
from tests.stack_builders import make_spec
from vllm_serving.findings import ConfigError, Severity
from vllm_serving.render.kubernetes.leader_worker_set import pod_template
from vllm_serving.render.kubernetes.objects import render_objects
from vllm_serving.render.kubernetes.pod_names import longest_pod_name
from vllm_serving.spec import ServingSpec


def _pod(spec: ServingSpec) -> dict[str, Any]:
    pod: dict[str, Any] = render_objects(spec).workload["spec"]["template"]["spec"]
    return pod


def _volumes(pod: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in pod["volumes"]}


def test_the_server_runs_under_the_restricted_profile_but_for_root() -> None:
    """Pod Security Standards, "restricted" (kubernetes.io/docs/concepts/security/pod-security-standards):
    no privilege escalation, every capability dropped, the RuntimeDefault seccomp profile. The
    official image runs as root and writes its caches, so runAsNonRoot and a read-only root
    filesystem stay off (tests/kubernetes/test_manifest_scan.py lists why)."""
    pod = _pod(make_spec())
    assert pod["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    for container in (*pod["initContainers"], *pod["containers"]):
        assert container["securityContext"] == {
            "allowPrivilegeEscalation": False, "privileged": False, "readOnlyRootFilesystem": False,
            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}, container["name"]
    # no service-account token or Service env in a pod that needs neither
    assert pod["automountServiceAccountToken"] is False and pod["enableServiceLinks"] is False
    assert pod["terminationGracePeriodSeconds"] == 60  # a100-k8s's kubernetes.terminationGracePeriodSeconds


@pytest.mark.parametrize(("sections", "size"), [
    ({}, "32Gi"),  # a100-k8s: kubernetes.shmSize 32g
    ({"kubernetes": {"shmSize": None}}, "16Gi"),  # neither set: 16 GiB
    ({"kubernetes": {"shmSize": None}, "container": {"shmSize": "8g"}}, "8Gi"),  # the container's
    ({"kubernetes": {"shmSize": "24g"}, "container": {"shmSize": "8g"}}, "24Gi"),  # the cluster's wins
])
def test_dev_shm_is_sized_by_kubernetes_then_container_then_16_gib(sections: dict[str, Any], size: str) -> None:
    """docs/kubernetes.md: `kubernetes.shmSize`, else `container.shmSize`, else 16Gi."""
    pod = _pod(make_spec(**sections))
    assert _volumes(pod)["dshm"] == {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": size}}


def test_a_cpu_pod_asks_for_no_gpu_node() -> None:
    """The `local` stack (device: cpu) on a cluster: no GPU limit, no GPU node selector or taint
    toleration, and its container.shmSize (4g) for /dev/shm."""
    spec = make_spec("local", target={"kind": "kubernetes"}, kubernetes={"namespace": "vllm"})
    objs = render_objects(spec)
    pod = _pod(spec)
    server = pod["containers"][0]
    assert "limits" not in server.get("resources", {})
    assert "nodeSelector" not in pod and "tolerations" not in pod
    assert _volumes(pod)["dshm"]["emptyDir"]["sizeLimit"] == "4Gi"
    kubernetes_validate.validate(objs.workload, KUBERNETES_VERSION, strict=True)
    # tolerations a user sets are kept even on a CPU pod
    tolerated = make_spec("local", target={"kind": "kubernetes"}, kubernetes={
        "namespace": "vllm", "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]})
    assert _pod(tolerated)["tolerations"] == [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]


def test_requests_and_limits_as_the_stack_gives_them() -> None:
    """a100-k8s: cpu "16", memory 64g, memoryLimit 128g (GiB in Docker notation), 4 GPUs (TP 4)."""
    server = _pod(make_spec())["containers"][0]
    assert server["resources"] == {"requests": {"cpu": "16", "memory": "64Gi"},
                                   "limits": {"nvidia.com/gpu": "4", "memory": "128Gi"}}
    bare = _pod(make_spec(kubernetes={"resources": None}))["containers"][0]
    assert bare["resources"] == {"limits": {"nvidia.com/gpu": "4"}}


def test_pull_secrets_the_stacks_then_the_users() -> None:
    spec = make_spec(secrets=("registryPassword",), image={"username": "robot", "registry": "harbor.local"},
                     kubernetes={"imagePullSecrets": ["cluster-wide"]})
    assert _pod(spec)["imagePullSecrets"] == [{"name": "vllm-registry"}, {"name": "cluster-wide"}]
    assert "imagePullSecrets" not in _pod(make_spec())


def test_engine_env_reaches_the_server_before_the_secrets() -> None:
    spec = make_spec(secrets=("apiKey",), engine={"env": {"VLLM_LOGGING_LEVEL": "DEBUG"}})
    env = _pod(spec)["containers"][0]["env"]
    assert env == [{"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"},
                   {"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {"name": "vllm-credentials",
                                                                           "key": "VLLM_API_KEY"}}}]
    assert "env" not in _pod(make_spec())["containers"][0]


def test_a_multi_node_servers_pods_are_named_as_the_rules_count_them() -> None:
    """docs/rules.md `multi-node-name-too-long`: the longest pod is <name>-group-<replica>-<node>;
    LeaderWorkerSet names a group's leader <lws>-<group> and its workers <lws>-<group>-<index>."""
    spec = two_node_spec(kubernetes={"replicas": 3})
    lws = render_objects(spec).leader_worker_set
    assert lws is not None and lws["metadata"]["name"] == "vllm-group"
    assert longest_pod_name(spec) == "vllm-group-2-1"  # 3 groups (0-2) of 2 pods (0-1)


def test_a_single_node_deployment_recreates_and_budgets_only_with_replicas() -> None:
    one = render_objects(make_spec())
    assert one.deployment is not None and one.deployment["spec"]["replicas"] == 1
    assert one.deployment["spec"]["revisionHistoryLimit"] == 3
    two = render_objects(make_spec(kubernetes={"replicas": 2, "cache": {"accessMode": "ReadWriteMany"}}))
    assert two.deployment is not None
    assert two.deployment["spec"]["strategy"] == {"type": "RollingUpdate",
                                                  "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    assert two.disruption_budget is not None
    assert two.disruption_budget["spec"]["selector"] == {"matchLabels": {
        "app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "vllm"}}


@pytest.mark.parametrize("mode", ["ReadWriteOnce", "ReadWriteOncePod"])
def test_several_pods_cannot_share_a_single_writer_cache(mode: str) -> None:
    """A ReadWriteOnce volume mounts on one node, ReadWriteOncePod in one pod (Kubernetes'
    access modes): two replicas, or two nodes of one server, would leave a pod Pending."""
    for spec in (make_spec(kubernetes={"replicas": 2, "cache": {"accessMode": mode}}),
                 two_node_spec(kubernetes={"cache": {"accessMode": mode}})):
        with pytest.raises(ConfigError) as err:
            render_objects(spec)
        finding = err.value.findings[0]
        assert (finding.code, finding.severity, finding.key) == (
            "k8s-cache-shared", Severity.ERROR, "vllm-serving:kubernetes.cache.accessMode")
        assert mode in finding.message and "ReadWriteMany" in finding.fix
    one = render_objects(make_spec(kubernetes={"cache": {"accessMode": mode}})).cache_claim
    assert one is not None and one["spec"]["accessModes"] == [mode]


def test_the_caches_claim_is_kept_apart_from_the_weights() -> None:
    """docs/kubernetes.md: the compile cache's own claim, 20Gi by default, mounted where vLLM
    writes its compile cache; no cache claim when cache.enabled is false."""
    objs = render_objects(make_spec(kubernetes={"cache": {"size": None, "storageClassName": "fast"}}))
    assert objs.cache_claim is not None
    assert objs.cache_claim["metadata"]["name"] == "vllm-cache"
    assert objs.cache_claim["spec"]["resources"]["requests"]["storage"] == "20Gi"
    assert objs.cache_claim["spec"]["storageClassName"] == "fast"
    assert objs.cache_claim["spec"]["volumeMode"] == "Filesystem"
    assert objs.cache_claim["metadata"]["labels"]["app.kubernetes.io/component"] == "compile-cache"
    off = render_objects(make_spec(cache={"enabled": False}))
    assert off.cache_claim is None
    assert "compile-cache" not in _volumes(_pod(make_spec(cache={"enabled": False})))


def test_the_pod_template_that_serves_is_the_deployments_or_the_leaders() -> None:
    """What the checksum annotation and the pending-pod hint are written to (components/kubernetes)."""
    deployment = render_objects(make_spec()).workload
    assert pod_template(deployment) is deployment["spec"]["template"]
    lws = render_objects(two_node_spec()).workload
    assert pod_template(lws) is lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    body = copy.deepcopy(lws["spec"])
    assert pod_template(lws, body) is body["leaderWorkerTemplate"]["leaderTemplate"]


def test_without_a_network_policy_or_a_namespace_of_its_own_none_is_rendered() -> None:
    for spec in (make_spec(kubernetes={"networkPolicy": False, "createNamespace": False}),
                 two_node_spec(kubernetes={"networkPolicy": False, "createNamespace": False})):
        kinds = [o["kind"] for o in render_objects(spec).all()]
        assert "NetworkPolicy" not in kinds and "Namespace" not in kinds


def test_rdma_without_a_device_resource_still_locks_memory() -> None:
    """RDMA over the host network (no device plugin resource): no extra limit, IPC_LOCK all the same."""
    lws = render_objects(two_node_spec(kubernetes={"rdma": {"ncclEnv": {"NCCL_IB_HCA": "mlx5"}}})).workload
    server = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    assert server["resources"]["limits"] == {"nvidia.com/gpu": "8", "memory": "128Gi"}
    assert server["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["IPC_LOCK"]}


def test_annotation_based_scraping_finds_vllms_metrics() -> None:
    """Prometheus' kubernetes_sd example (documentation/examples/prometheus-kubernetes.yml) keeps a
    pod whose `prometheus.io/scrape` is exactly `true` (a regex, case-sensitive) and scrapes
    `prometheus.io/path` on `prometheus.io/port`; vLLM serves its metrics at /metrics on the API
    port (vllm/entrypoints/serve/instrumentator/metrics.py, `Mount("/metrics", ...)`), 8000 here."""
    annotations = render_objects(make_spec()).workload["spec"]["template"]["metadata"]["annotations"]
    assert {key: annotations[key] for key in ("prometheus.io/scrape", "prometheus.io/port", "prometheus.io/path")} \
        == {"prometheus.io/scrape": "true", "prometheus.io/port": "8000", "prometheus.io/path": "/metrics"}
    worker = render_objects(two_node_spec()).workload["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    assert worker["metadata"]["annotations"] == {"kubectl.kubernetes.io/default-container": "vllm"}
    # the pod role scrapes the pod's own IP, so the annotation names the container's port (8000),
    # never the Service's
    behind_80 = make_spec(kubernetes={"service": {"port": 80}})
    moved = render_objects(behind_80).workload["spec"]["template"]["metadata"]["annotations"]
    assert moved["prometheus.io/port"] == "8000"


def test_every_port_reference_names_the_servers_port() -> None:
    """The probes, the Service's targetPort and the NetworkPolicy name the container's port; a
    name that matches none leaves the Service without endpoints and every probe failing. A port
    name is an IANA service name: lower-case letters, digits and `-` (apimachinery `IsValidPortName`)."""
    objs = render_objects(make_spec())
    server = objs.workload["spec"]["template"]["spec"]["containers"][0]
    (port,) = server["ports"]
    assert port == {"name": "http", "containerPort": 8000, "protocol": "TCP"}
    assert re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", port["name"]) and len(port["name"]) <= 15
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert server[probe]["httpGet"]["port"] == port["name"], probe
    assert [p["targetPort"] for p in objs.service["spec"]["ports"]] == [port["name"]]
    assert objs.network_policy is not None
    assert [p["port"] for p in objs.network_policy["spec"]["ingress"][0]["ports"]] == [port["name"]]


def test_a_budget_of_several_replicas_is_a_valid_object_named_after_the_stack() -> None:
    objs = render_objects(make_spec(kubernetes={"replicas": 2, "cache": {"accessMode": "ReadWriteMany"}}))
    assert objs.disruption_budget is not None
    assert objs.disruption_budget["metadata"]["name"] == "vllm"
    for obj in objs.all():
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def test_a_toleration_reaches_the_pod_in_the_apis_field_names() -> None:
    """`tolerationSeconds` (Kubernetes' Toleration), never the settings' snake_case field."""
    toleration = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                  "tolerationSeconds": 300}
    spec = make_spec(kubernetes={"tolerations": [toleration]})
    assert _pod(spec)["tolerations"] == [toleration]
    kubernetes_validate.validate(render_objects(spec).workload, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("where", [{"kubernetes": {"weights": {"hostPath": "/data/models/q"}}},
                                   {"model": {"volumeName": None, "hostPath": "/data/models/q"}}])
def test_a_node_directory_of_weights_must_already_exist(where: dict[str, Any]) -> None:
    """Kubernetes' hostPath types (kubernetes.io/docs/concepts/storage/volumes/#hostpath): with
    `Directory` the pod does not start where the node lacks the directory; `DirectoryOrCreate`
    (or no type) would create an empty one and start vLLM on no weights. Read-only either way."""
    pod = _pod(make_spec(**where))
    assert _volumes(pod)["weights"] == {"name": "weights", "hostPath": {"path": "/data/models/q", "type": "Directory"}}
    (server,) = pod["containers"]
    weights = next(m for m in server["volumeMounts"] if m["name"] == "weights")
    assert weights["readOnly"] is True
