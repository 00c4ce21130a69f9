"""A server across nodes, rendered: a LeaderWorkerSet whose pods run vLLM's multi-node argv.

The "done when" case of issue 16: a model that needs two 8-GPU nodes (Llama-3.1-405B bf16 on
2 x 8 H100, vLLM's own LWS example) renders a LeaderWorkerSet valid against the LWS CRD's
published schema, with the leader and worker argv of vLLM's multi-node docs.
"""

from __future__ import annotations

import copy
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.kubernetes.cluster_version import KUBERNETES_VERSION
from tests.kubernetes.lws_schema import lws_errors
from tests.kubernetes.multi_node_stacks import two_node_spec, two_node_values
from tests.paths import PROJECT_DIR
from tests.stack_builders import make_spec
from vllm_serving import rules
from vllm_serving.cli import main
from vllm_serving.engine.release_registry import load
from vllm_serving.findings import ConfigError, Severity
from vllm_serving.render.kubernetes.objects import kubernetes_objects, manifests_yaml, render_objects
from vllm_serving.settings.stack_config import parse_stack_config

# vLLM's multi-node docs (serving/parallelism_scaling.md, "Running vLLM with MultiProcessing"),
# with the LWS variables for the head node's address and the node's rank.
LEADER_FLAGS = ["--nnodes", "2", "--node-rank", "0", "--master-addr", "$(LWS_LEADER_ADDRESS)"]
WORKER_FLAGS = ["--nnodes", "2", "--node-rank", "$(LWS_WORKER_INDEX)", "--master-addr", "$(LWS_LEADER_ADDRESS)",
                "--headless"]


def _lws(**sections: Any) -> dict[str, Any]:
    found = render_objects(two_node_spec(**sections)).leader_worker_set
    assert found is not None
    return found


def _pods(lws: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    template = lws["spec"]["leaderWorkerTemplate"]
    return template["leaderTemplate"], template["workerTemplate"]


def _server(template: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = template["spec"]["containers"][0]
    return container


def test_two_node_model_renders_a_valid_leader_worker_set() -> None:
    spec = two_node_spec()
    assert [f.code for f in rules.check(spec) if f.severity is Severity.ERROR] == []
    objects = list(yaml.safe_load_all(manifests_yaml(kubernetes_objects(spec))))
    assert [o["kind"] for o in objects] == ["Namespace", "PersistentVolumeClaim", "LeaderWorkerSet", "Service",
                                            "NetworkPolicy"]
    for obj in objects:
        if obj["kind"] == "LeaderWorkerSet":
            assert lws_errors(obj) == []
        else:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    lws = objects[2]
    assert lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert lws["spec"]["startupPolicy"] == "LeaderCreated"


def test_the_model_needs_the_second_node() -> None:
    """On one node of 8 H100 the same model does not load: that is why it spans two."""
    one_node = two_node_spec(engine={"pipelineParallelSize": 1}, kubernetes={"nodes": 1})
    errors = {f.code for f in rules.check(one_node) if f.severity is Severity.ERROR}
    assert "weights-exceed-budget" in errors


def test_leader_and_worker_argv_are_vllms_multi_node_launch() -> None:
    spec = two_node_spec()
    leader, worker = _pods(_lws())
    assert _server(leader)["args"] == [*spec.args, *LEADER_FLAGS]
    assert _server(worker)["args"] == [*spec.args, *WORKER_FLAGS]
    assert spec.args[spec.args.index("--tensor-parallel-size") + 1] == "8"
    assert spec.args[spec.args.index("--pipeline-parallel-size") + 1] == "2"
    release = load("0.19.1")  # the image's release parses every flag the pods add
    for flag in ("--nnodes", "--node-rank", "--master-addr", "--headless"):
        assert release.flag(flag) is not None, flag


def test_the_pods_find_each_other() -> None:
    """LWS injects LWS_LEADER_ADDRESS/LWS_WORKER_INDEX itself; vLLM's sockets bind to the pod IP."""
    for template in _pods(_lws()):
        env = _server(template)["env"]
        assert env[0] == {"name": "VLLM_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        assert not [e for e in env if e["name"].startswith("LWS_")], "the LWS webhook sets these"


def test_only_the_leader_serves_http() -> None:
    objs = render_objects(two_node_spec())
    leader, worker = _pods(objs.leader_worker_set or {})
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert probe in _server(leader) and probe not in _server(worker)
    assert _server(leader)["ports"][0]["containerPort"] == 8000 and "ports" not in _server(worker)
    assert "prometheus.io/scrape" in leader["metadata"]["annotations"]
    assert "prometheus.io/scrape" not in worker["metadata"]["annotations"]
    # the LWS controller labels each group's leader worker-index 0 (api/leaderworkerset/v1)
    assert objs.service["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    assert objs.service["metadata"]["name"] == "vllm"
    # the LWS controller makes a headless Service named after the LeaderWorkerSet: not ours
    assert (objs.leader_worker_set or {})["metadata"]["name"] != objs.service["metadata"]["name"]


def test_every_pod_gets_a_node_of_gpus_shm_weights_and_the_gpu_selector() -> None:
    for template in _pods(_lws()):
        pod, server = template["spec"], _server(template)
        assert server["resources"]["limits"]["nvidia.com/gpu"] == "8"  # one node, not TP x PP = 16
        assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["dshm"]["emptyDir"]["medium"] == "Memory"
        weights = next(m for m in server["volumeMounts"] if m["name"] == "weights")
        assert weights["readOnly"] is True
        for init in pod.get("initContainers", []):  # the preflight checks this pod's GPUs
            assert init["resources"]["limits"]["nvidia.com/gpu"] == "8"
            if "--gpus" in init.get("args", []):
                assert init["args"][init["args"].index("--gpus") + 1] == "8"


def test_rdma_adds_ipc_lock_the_device_and_nccl_env() -> None:
    lws = _lws(kubernetes={"rdma": {"resource": "rdma/rdma_shared_device_a", "networks": "rdma-net",
                                    "ncclEnv": {"NCCL_IB_HCA": "mlx5", "NCCL_DEBUG": "INFO"}}})
    assert lws_errors(lws) == []
    for template in _pods(lws):
        server = _server(template)
        assert server["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["IPC_LOCK"]}
        assert server["resources"]["limits"]["rdma/rdma_shared_device_a"] == "1"
        names = [e["name"] for e in server["env"]]
        assert names[:3] == ["VLLM_HOST_IP", "NCCL_DEBUG", "NCCL_IB_HCA"]
        assert template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"] == "rdma-net"
    plain = _server(_pods(_lws())[0])
    assert plain["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_the_api_key_reaches_the_leader_only() -> None:
    lws = render_objects(two_node_spec(secrets=("apiKey", "hfToken"))).leader_worker_set
    leader, worker = _pods(lws or {})
    assert "VLLM_API_KEY" in [e["name"] for e in _server(leader)["env"]]
    assert [e["name"] for e in _server(worker)["env"]] == ["VLLM_HOST_IP", "HF_TOKEN"]


def test_replicas_count_groups_behind_a_budget() -> None:
    objs = render_objects(two_node_spec(kubernetes={"replicas": 3}))
    lws = objs.leader_worker_set or {}
    assert lws["spec"]["replicas"] == 3 and lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    rollout = lws["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]
    assert rollout == {"maxUnavailable": 1, "maxSurge": 0}  # no spare nodes for a surge group
    assert objs.disruption_budget is not None and objs.disruption_budget["spec"]["maxUnavailable"] == 1
    assert lws_errors(lws) == []
    kubernetes_validate.validate(objs.disruption_budget, KUBERNETES_VERSION, strict=True)


def test_network_policy_admits_the_groups_own_traffic() -> None:
    """NCCL and torch.distributed use ports vLLM picks at start-up, between the pods of a group."""
    one = render_objects(make_spec()).network_policy
    many = render_objects(two_node_spec()).network_policy
    assert one is not None and many is not None
    assert many["spec"]["ingress"][:-1] == one["spec"]["ingress"]
    assert many["spec"]["ingress"][-1] == {"from": [{"podSelector": {"matchLabels": {
        "app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "vllm"}}}]}


def test_yaml_has_no_aliases_and_is_deterministic() -> None:
    first = manifests_yaml(kubernetes_objects(two_node_spec(kubernetes={"rdma": {"ncclEnv": {"NCCL_DEBUG": "INFO"}}})))
    assert "&id" not in first and "*id" not in first
    assert first == manifests_yaml(kubernetes_objects(two_node_spec(kubernetes={"rdma": {"ncclEnv": {
        "NCCL_DEBUG": "INFO"}}})))


def test_the_crd_schema_refuses_what_the_api_server_would() -> None:
    """The schema check is not vacuous: a misspelt field, a wrong enum, a missing template."""
    lws = _lws()
    cases = [("spec.leaderWorkerTemplate", "sizee", 2), ("spec", "startupPolicy", "LeaderStarted"),
             ("spec.leaderWorkerTemplate.leaderTemplate.spec.containers.0", "argz", [])]
    for path, key, value in cases:
        bad = copy.deepcopy(lws)
        target: Any = bad
        for part in path.split("."):
            target = target[int(part)] if part.isdigit() else target[part]
        target[key] = value
        assert lws_errors(bad), (path, key)
    bad = copy.deepcopy(lws)
    del bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    assert lws_errors(bad)


def test_a_single_node_stack_renders_no_leader_worker_set() -> None:
    objs = render_objects(make_spec())
    assert objs.leader_worker_set is None and objs.deployment is not None
    assert objs.workload is objs.deployment


@pytest.mark.parametrize(("kubernetes", "key", "fragment"), [
    ({"multiNodeBackend": "ray"}, "kubernetes.multiNodeBackend", "use mp"),
    ({"nodes": 1, "rdma": {}}, "kubernetes.rdma", "remove kubernetes.rdma"),
    ({"rdma": {"ncclEnv": {"GLOO_SOCKET_IFNAME": "eth0"}}}, "kubernetes.rdma.ncclEnv", "engine.env"),
    ({"weights": {"claim": {"size": "800g"}}}, "kubernetes.nodes", "ReadOnlyMany"),
    ({"nodes": 0}, "kubernetes.nodes", ""),
])
def test_config_errors_name_key_and_fix(kubernetes: dict[str, Any], key: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_stack_config(two_node_values(kubernetes=kubernetes))
    finding = err.value.findings[0]
    assert finding.key == f"vllm-serving:{key}"
    assert fragment in finding.fix


def test_a_shared_write_once_cache_is_refused_across_nodes() -> None:
    with pytest.raises(ConfigError) as err:
        render_objects(two_node_spec(kubernetes={"cache": {"accessMode": "ReadWriteOnce"}}))
    assert err.value.findings[0].key == "vllm-serving:kubernetes.cache.accessMode"
    assert "nodes: 1" in err.value.findings[0].fix


def _stack_file(tmp_path: Any) -> str:
    path = tmp_path / "Pulumi.llama-2n.yaml"
    path.write_text(yaml.safe_dump({"config": two_node_values()}, sort_keys=False))
    return str(path)


def test_render_and_plan_show_it_offline(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    stack = _stack_file(tmp_path)
    assert main(["--project-dir", str(PROJECT_DIR), "render", stack, "--format", "k8s"]) == 0
    rendered = list(yaml.safe_load_all(capsys.readouterr().out))
    lws = next(o for o in rendered if o["kind"] == "LeaderWorkerSet")
    assert lws == render_objects(two_node_spec()).leader_worker_set
    assert main(["--project-dir", str(PROJECT_DIR), "plan", stack]) == 0
    text = capsys.readouterr().out
    assert "8 x nvidia.com/gpu per pod" in text and "Scale out" in text
    assert "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet" in text


def test_a_changed_api_key_rolls_the_group_through_its_leader_s_checksum() -> None:
    """A Secret's new value reaches a running pod only when the pod is replaced: the leader's template
    carries the credentials' checksum, so a rotated key rolls the group, as it rolls a Deployment."""
    def checksum(key: str) -> str | None:
        lws = render_objects(two_node_spec(secrets=("apiKey",)), {"apiKey": key}).leader_worker_set or {}
        template = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
        return template["metadata"]["annotations"].get("vllm-serving/credentials-checksum")

    first, second = checksum("key-one"), checksum("key-two")
    assert first is not None and second is not None and first != second
    assert "key-one" not in first


def test_every_container_pulls_its_image_only_when_the_node_lacks_it() -> None:
    # Kubernetes takes Always, IfNotPresent or Never, case-sensitive; a tag-pinned release is pulled
    # once per node (core/v1 Container.imagePullPolicy)
    one = render_objects(make_spec()).deployment or {}
    leader, worker = _pods(_lws())
    pods = [one["spec"]["template"], leader, worker]
    assert {c["imagePullPolicy"] for pod in pods for c in pod["spec"]["containers"]} == {"IfNotPresent"}
