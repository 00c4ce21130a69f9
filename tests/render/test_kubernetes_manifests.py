"""The pure Kubernetes rendering: one argv, GPU limits, probes, volumes, secrets, determinism."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
import yaml

from tests.stack_builders import make_spec, stack_values
from vllm_serving.findings import ConfigError
from vllm_serving.masking import MASK
from vllm_serving.render.docker_container import container_spec
from vllm_serving.render.kubernetes.objects import kubernetes_objects, manifests_yaml, render_objects
from vllm_serving.settings import VLLM_CACHE_PATH
from vllm_serving.settings.stack_config import parse_stack_config

LABELS = ("name", "instance", "version", "component", "managed-by")


def _container(objs: Any) -> dict[str, Any]:
    return objs.deployment["spec"]["template"]["spec"]["containers"][0]


def test_same_argv_as_the_docker_backend() -> None:
    spec = make_spec()
    assert _container(render_objects(spec))["args"] == list(spec.args)
    docker = make_spec("a100")
    assert list(container_spec(docker).command) == list(spec.args), "a100 and a100-k8s share the engine"


def test_gpu_limit_is_tp_times_pp() -> None:
    objs = render_objects(make_spec())
    assert _container(objs)["resources"]["limits"]["nvidia.com/gpu"] == "4"
    objs = render_objects(make_spec(engine={"tensorParallelSize": 2, "pipelineParallelSize": 2},
                                    kubernetes={"gpuResource": "nvidia.com/a100"}))
    assert _container(objs)["resources"]["limits"] == {"nvidia.com/a100": "4", "memory": "128Gi"}


def test_probes_cover_the_model_load() -> None:
    spec = make_spec()
    c = _container(render_objects(spec))
    startup = c["startupProbe"]
    assert startup["failureThreshold"] * startup["periodSeconds"] >= spec.startup_seconds
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"] == {"path": "/health", "port": "http", "scheme": "HTTP"}
    deployment = render_objects(spec).deployment["spec"]
    # By hand: a100-k8s loads Qwen3.6-27B-FP8, ~28.3 GiB (FP8 layers, bf16 embeddings and vision):
    # 300 s + 15 s/GiB x 28.3 GiB = 725 s -> 780 s in whole minutes; plus 900 s to schedule the pod
    # and pull the ~20 GB image onto a fresh node: 1680 s.
    assert spec.startup_seconds == 780
    assert startup["failureThreshold"] == 78, "780 s / 10 s a probe"
    assert deployment["progressDeadlineSeconds"] == 1680


def test_volumes_shm_weights_read_only_and_cache() -> None:
    objs = render_objects(make_spec())
    pod = objs.deployment["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m for m in _container(objs)["volumeMounts"]}
    assert volumes["dshm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "32Gi"}
    assert mounts["dshm"]["mountPath"] == "/dev/shm"
    assert mounts["weights"] == {"name": "weights", "mountPath": "/Qwen3.6-27B-FP8", "readOnly": True}
    assert volumes["weights"]["persistentVolumeClaim"] == {"claimName": "qwen3-6-27b-fp8", "readOnly": True}
    assert mounts["compile-cache"]["mountPath"] == VLLM_CACHE_PATH
    assert objs.cache_claim is not None and objs.weights_claim is None


@pytest.mark.parametrize("weights, kind", [
    ({"hostPath": "/data/models/q"}, "hostPath"),
    ({"claim": {"size": "64g", "storageClassName": "fast", "accessMode": "ReadOnlyMany"}}, "persistentVolumeClaim"),
])
def test_weights_sources(weights: dict[str, Any], kind: str) -> None:
    objs = render_objects(make_spec(kubernetes={"weights": weights}))
    volume = objs.deployment["spec"]["template"]["spec"]["volumes"][0]
    assert kind in volume
    if kind == "persistentVolumeClaim":
        assert volume[kind] == {"claimName": "vllm-weights", "readOnly": True}
        assert objs.weights_claim is not None
        assert objs.weights_claim["spec"]["resources"]["requests"]["storage"] == "64Gi"
        assert objs.weights_claim["spec"]["accessModes"] == ["ReadOnlyMany"]


def test_scheduling_defaults_and_overrides() -> None:
    pod = render_objects(make_spec()).deployment["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["automountServiceAccountToken"] is False and pod["enableServiceLinks"] is False
    assert "runtimeClassName" not in pod
    pod = render_objects(make_spec(kubernetes={"nodeSelector": {}, "tolerations": [],
                                               "runtimeClassName": "nvidia"})).deployment["spec"]["template"]["spec"]
    assert "nodeSelector" not in pod and "tolerations" not in pod and pod["runtimeClassName"] == "nvidia"


def test_single_replica_recreates_several_never_surge() -> None:
    one = render_objects(make_spec())
    assert one.deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert one.disruption_budget is None
    many = render_objects(make_spec(kubernetes={"replicas": 3, "cache": {"accessMode": "ReadWriteMany"}}))
    assert many.deployment["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == 0
    assert many.disruption_budget is not None
    assert many.disruption_budget["spec"]["maxUnavailable"] == 1


def test_every_object_is_labelled_and_namespaced() -> None:
    spec = make_spec(secrets=("apiKey", "registryPassword"),
                     image={"username": "robot", "registry": "harbor.local:30000"})
    for obj in kubernetes_objects(spec):
        labels = obj["metadata"]["labels"]
        assert all(f"app.kubernetes.io/{k}" in labels for k in LABELS), obj["kind"]
        assert labels["app.kubernetes.io/version"] == "v0.19.1"
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == "vllm"


def test_secrets_masked_and_referenced_never_plain() -> None:
    spec = make_spec(secrets=("apiKey", "registryPassword"),
                     image={"username": "robot", "registry": "harbor.local:30000"})
    objs = render_objects(spec)
    assert objs.credentials_secret is not None and objs.registry_secret is not None
    assert objs.credentials_secret["stringData"] == {"VLLM_API_KEY": MASK}
    env = _container(objs)["env"]
    assert env == [{"name": "VLLM_API_KEY",
                    "valueFrom": {"secretKeyRef": {"name": "vllm-credentials", "key": "VLLM_API_KEY"}}}]
    pod = objs.deployment["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "vllm-registry"}]
    assert objs.registry_secret["type"] == "kubernetes.io/dockerconfigjson"
    revealed = render_objects(spec, {"apiKey": "SENTINEL-apikey-123", "registryPassword": "pw"})
    assert revealed.credentials_secret is not None and revealed.registry_secret is not None
    assert revealed.credentials_secret["stringData"]["VLLM_API_KEY"] == "SENTINEL-apikey-123"
    auth = json.loads(revealed.registry_secret["stringData"][".dockerconfigjson"])["auths"]
    assert auth["harbor.local:30000"]["password"] == "pw"
    assert "SENTINEL" not in json.dumps(revealed.deployment)


def test_service_types() -> None:
    svc = render_objects(make_spec()).service["spec"]
    assert svc["type"] == "ClusterIP" and svc["ports"][0]["name"] == "http"
    svc = render_objects(make_spec(kubernetes={"service": {"type": "NodePort", "nodePort": 30080}})).service["spec"]
    assert svc["ports"][0]["nodePort"] == 30080


def test_deterministic_yaml() -> None:
    first = manifests_yaml(kubernetes_objects(make_spec()))
    assert first == manifests_yaml(kubernetes_objects(make_spec()))
    assert len(list(yaml.safe_load_all(first))) == 5  # Namespace, cache PVC, Deployment, Service, NetworkPolicy


def test_core_never_imports_pulumi() -> None:
    import subprocess

    code = ("import sys, vllm_serving.render.kubernetes.objects, vllm_serving.cli.render;"
            "bad=[m for m in sys.modules if m.startswith(('pulumi', 'pulumi_kubernetes'))];"
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("section, key, fragment", [
    ({"namespace": "default"}, "kubernetes.namespace", "namespace of its own"),
    ({"service": {"nodePort": 30080}}, "kubernetes.service.nodePort", "NodePort"),
    ({"tolerations": [{"operator": "Exists", "value": "x"}]}, "kubernetes.tolerations[0].value", "operator: Equal"),
    ({"replicas": 2, "weights": {"claim": {"size": "64g"}}}, "kubernetes.replicas", "ReadOnlyMany"),
    ({"shmSize": "200g"}, "kubernetes.shmSize", "memoryLimit"),
    ({"gpuResource": "gpu"}, "kubernetes.gpuResource", "nvidia.com/gpu"),
    ({"weights": {"hostPath": "/a", "existingClaim": "b"}}, "kubernetes.weights.existingClaim", "keep one"),
    ({"replica": 2}, "kubernetes.replica", "replicas"),
])
def test_config_errors_name_key_and_fix(section: dict[str, Any], key: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_stack_config(stack_values(kubernetes=section))
    finding = err.value.findings[0]
    assert finding.key == f"vllm-serving:{key}"
    assert fragment in finding.fix


def test_shared_rwo_cache_is_refused() -> None:
    with pytest.raises(ConfigError) as err:
        render_objects(make_spec(kubernetes={"replicas": 2}))
    assert err.value.findings[0].key == "vllm-serving:kubernetes.cache.accessMode"
