"""`vllm-stack plan`'s facts as a reviewer reads them before `pulumi up`: every resource the program
will register (by the type token Pulumi prints in its preview), where the weights are mounted from,
the GPUs each container or pod gets, the port and the startup allowance.

The expected values are written out by hand: type tokens as Pulumi spells them (a component's
own `vllm-serving:<backend>:<Class>`, the providers' `docker:index/<module>:<Resource>` and
`kubernetes:<group>/<version>:<Kind>`, core objects under `core/v1`), durations as Go's
`time.Duration.String` prints them (1500 s is `25m0s`, 5400 s `1h30m0s`), compute capabilities from
NVIDIA's CUDA GPU table (V100 7.0, A100 8.0).
"""

from __future__ import annotations

from tests.stack_builders import edit, make_spec, shipped_settings, spec_of
from vllm_serving.catalog.models import MODELS
from vllm_serving.views.kubernetes_plan import kubernetes_placement, planned_kubernetes_resources
from vllm_serving.views.plan import deployment_plan, planned_docker_resources, set_values

COMPONENT = "vllm-serving:docker:"
CONTAINER = "docker:index/container:Container"
VOLUME = "docker:index/volume:Volume"


def docker_resources(name: str, *, cache: str | None, model_volume: bool = False,
                     preflight: bool = True) -> list[tuple[str, str]]:
    """What the Docker backend registers for one server named `name`, in registration order;
    `cache` is the compile cache's mount kind (None: no cache)."""
    found = [(f"{COMPONENT}VllmDeployment", name), ("pulumi:providers:docker", f"{name}-docker"),
             (f"{COMPONENT}RegistryImage", f"{name}-image"), ("docker:index/remoteImage:RemoteImage", f"{name}-image"),
             (f"{COMPONENT}ModelVolume", f"{name}-model")]
    found += [(VOLUME, f"{name}-model")] if model_volume else []
    found += [(f"{COMPONENT}CacheVolume", f"{name}-cache")] if cache else []
    found += [(VOLUME, f"{name}-cache")] if cache == "volume" else []
    found += [(f"{COMPONENT}Preflight", f"{name}-preflight"), (CONTAINER, f"{name}-preflight")] if preflight else []
    return [*found, (f"{COMPONENT}VllmServer", f"{name}-server"), (CONTAINER, f"{name}-server")]


# --- Docker ---------------------------------------------------------------------------------------

def test_a_named_cache_volume_is_registered_as_a_docker_volume() -> None:
    """Pulumi.a100.yaml: the weights bind-mounted from /data/models, the cache a named volume."""
    assert planned_docker_resources(make_spec("a100")) == docker_resources("vllm", cache="volume")


def test_host_directories_register_no_docker_volume() -> None:
    """Pulumi.v100.yaml: weights and cache both under /u02/models on the host."""
    assert planned_docker_resources(make_spec("v100")) == docker_resources("vllm-qwen35-27b", cache="bind")


def test_weights_in_a_named_volume_register_it() -> None:
    spec = make_spec("v100", model={"hostPath": None, "volumeName": "qwen-weights"})
    assert planned_docker_resources(spec) == docker_resources("vllm-qwen35-27b", cache="bind", model_volume=True)
    assert deployment_plan(spec, [])["mounts"][0] == {
        "kind": "volume", "source": "qwen-weights", "target": "/data/models/Qwen3.5-27B", "readOnly": True}


def test_no_preflight_and_no_cache_register_neither() -> None:
    spec = make_spec("a100", preflight={"enabled": False}, cache={"enabled": False})
    assert planned_docker_resources(spec) == docker_resources("vllm", cache=None, preflight=False)
    assert [m["target"] for m in deployment_plan(spec, [])["mounts"]] == ["/Qwen3.6-27B-FP8"]


def test_a_fleet_host_names_its_resources_after_itself() -> None:
    assert planned_docker_resources(make_spec("a100"), "vllm-gpu01") == docker_resources("vllm-gpu01", cache="volume")


def test_the_docker_placement_is_what_the_container_gets() -> None:
    plan = deployment_plan(make_spec("a100", container={"startupTimeout": "25m"}), [])
    assert plan["gpu"] == {"name": "A100-80GB", "computeCapability": "8.0", "memoryGib": 80.0, "hostCount": 10,
                           "given": "device=6,7,8,9"}
    assert plan["mounts"] == [
        {"kind": "bind", "source": "/data/models/Qwen3.6-27B-FP8", "target": "/Qwen3.6-27B-FP8", "readOnly": True},
        {"kind": "volume", "source": "vllm-cache", "target": "/root/.cache/vllm", "readOnly": False}]
    assert plan["ports"] == [{"bindAddress": "0.0.0.0", "hostPort": 8000, "containerPort": 8000}]
    assert plan["container"] == {"name": "vllm", "runtime": None, "ipcMode": "private", "shmSizeMb": 32768,
                                 "privileged": False, "restart": "unless-stopped", "startupAllowance": "25m0s"}
    assert plan["target"] == {"kind": "docker", "where": "local Docker socket"}
    assert plan["endpoints"]["baseUrl"] == "http://localhost:8000/v1"


def test_the_plan_names_the_remote_host_the_release_source_and_which_secrets_are_set() -> None:
    spec = make_spec("v100", secrets=("apiKey",), target={"dockerHost": "ssh://deploy@gpu-v100-01"},
                     release={"promoteFrom": "organization/vllm-serving/v100-staging"},
                     container={"startupTimeout": "90m"})
    plan = deployment_plan(spec, [])
    assert plan["target"] == {"kind": "docker", "where": "ssh://deploy@gpu-v100-01"}
    assert plan["gpu"]["computeCapability"] == "7.0" and plan["gpu"]["given"] == "all"
    assert plan["container"]["runtime"] == "nvidia" and plan["container"]["startupAllowance"] == "1h30m0s"
    assert plan["release"]["promotedFrom"] == "organization/vllm-serving/v100-staging"
    assert plan["secrets"] == {"registryPassword": "not set", "apiKey": "set", "hfToken": "not set"}
    assert plan["secretEnv"] == ["VLLM_API_KEY"]
    assert plan["model"]["name"] == "Qwen3.5-27B" and plan["model"]["servedModelName"] == "qwen3.5-27b"
    assert plan["image"] == {"reference": "192.168.122.156:30000/vllm/vllm-openai:v0.19.1", "registryUser": "admin"}


def test_the_model_weights_read_to_a_tenth_of_a_gib() -> None:
    """Qwen3.6-27B-FP8's checkpoint: 28.3 GiB of safetensors (the catalog's figure)."""
    model = deployment_plan(make_spec("a100"), [])["model"]
    assert model["weightsGib"] == 28.3 and model["quantization"] == "fp8"


def test_the_scale_out_shows_only_with_more_than_one_engine() -> None:
    assert "scaleOut" not in deployment_plan(make_spec("a100-k8s"), [])
    two = make_spec("a100-k8s", kubernetes={"replicas": 2, "cache": {"accessMode": "ReadWriteMany"}})
    scale_out = deployment_plan(two, [])["scaleOut"]
    assert (scale_out["replicas"], scale_out["engines"], scale_out["pods"]) == (2, 2, 2)
    assert scale_out["kvCacheTokensTotal"] == 2 * scale_out["kvCacheTokensPerEngine"]


def test_unset_values_are_left_out_of_what_a_reader_sees() -> None:
    assert set_values({"runtime": None, "privileged": False, "shmSizeMb": 0}) == {"privileged": False,
                                                                                 "shmSizeMb": 0}


# --- Kubernetes -----------------------------------------------------------------------------------

K8S_COMPONENT = ("vllm-serving:kubernetes:VllmKubernetes", "vllm")
NAMESPACE = ("kubernetes:core/v1:Namespace", "vllm")
CACHE_CLAIM = ("kubernetes:core/v1:PersistentVolumeClaim", "vllm-cache")
DEPLOYMENT = ("kubernetes:apps/v1:Deployment", "vllm")
SERVICE = ("kubernetes:core/v1:Service", "vllm")
NETWORK_POLICY = ("kubernetes:networking.k8s.io/v1:NetworkPolicy", "vllm")


def test_the_kubernetes_objects_by_their_pulumi_type_tokens() -> None:
    """Pulumi.a100-k8s.yaml: a namespace it creates, the cache claim, the server and its Service
    and NetworkPolicy (a core object's group is `core`, as the provider's tokens spell it)."""
    assert planned_kubernetes_resources(make_spec("a100-k8s")) == [
        K8S_COMPONENT, NAMESPACE, CACHE_CLAIM, DEPLOYMENT, SERVICE, NETWORK_POLICY]
    spec = make_spec("a100-k8s", kubernetes={"createNamespace": False, "networkPolicy": False})
    assert planned_kubernetes_resources(spec) == [K8S_COMPONENT, CACHE_CLAIM, DEPLOYMENT, SERVICE]
    plan = deployment_plan(spec, [])
    assert [(r["type"], r["name"]) for r in plan["resources"]] == [K8S_COMPONENT, CACHE_CLAIM, DEPLOYMENT, SERVICE]
    assert plan["target"] == {"kind": "kubernetes", "where": "namespace vllm of the current kubeconfig context"}


def test_the_pod_gets_its_gpus_claims_and_the_shared_memory() -> None:
    placement = kubernetes_placement(make_spec("a100-k8s"))
    assert placement["given"] == "4 x nvidia.com/gpu per pod"  # tensorParallelSize 4, one node
    assert placement["mounts"] == [
        {"kind": "persistentVolumeClaim", "source": "qwen3-6-27b-fp8", "target": "/Qwen3.6-27B-FP8", "readOnly": True},
        {"kind": "persistentVolumeClaim", "source": "vllm-cache", "target": "/root/.cache/vllm", "readOnly": False},
        {"kind": "emptyDir", "source": "Memory 32Gi", "target": "/dev/shm", "readOnly": False}]
    assert placement["ports"] == [{"service": "ClusterIP vllm", "port": 8000, "containerPort": 8000}]


def test_weights_on_a_node_directory_show_the_directory() -> None:
    spec = make_spec("a100-k8s", kubernetes={"weights": {"hostPath": "/data/models/Qwen3.6-27B-FP8"}})
    assert kubernetes_placement(spec)["mounts"][0] == {
        "kind": "hostPath", "source": "/data/models/Qwen3.6-27B-FP8", "target": "/Qwen3.6-27B-FP8", "readOnly": True}
    assert deployment_plan(spec, [])["mounts"][0]["source"] == "/data/models/Qwen3.6-27B-FP8"


def test_a_weights_claim_the_stack_creates_is_mounted_and_registered() -> None:
    spec = make_spec("a100-k8s", kubernetes={
        "weights": {"claim": {"size": "64g", "storageClassName": "fast-ssd", "accessMode": "ReadWriteOnce"}}})
    assert kubernetes_placement(spec)["mounts"][0] == {
        "kind": "persistentVolumeClaim", "source": "vllm-weights", "target": "/Qwen3.6-27B-FP8", "readOnly": True}
    assert ("kubernetes:core/v1:PersistentVolumeClaim", "vllm-weights") in planned_kubernetes_resources(spec)


def test_the_pod_settings_and_the_startup_allowance() -> None:
    spec = make_spec("a100-k8s", container={"startupTimeout": "25m"},
                     kubernetes={"runtimeClassName": "nvidia", "service": {"type": "NodePort", "nodePort": 30080}})
    placement = kubernetes_placement(spec)
    assert placement["container"] == {
        "name": "vllm", "namespace": "vllm", "replicas": 1, "runtimeClassName": "nvidia",
        # GPU feature discovery's product label for the A100-SXM4-80GB
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}, "startupAllowance": "25m0s"}
    assert placement["ports"] == [{"service": "NodePort vllm", "port": 8000, "containerPort": 8000}]
    assert deployment_plan(spec, [])["container"]["startupAllowance"] == "25m0s"


def test_a_cpu_pod_is_given_no_gpu() -> None:
    spec = make_spec("a100-k8s", hardware={"gpu": None, "device": "cpu", "count": 1},
                     engine={"tensorParallelSize": 1, "kvCacheDtype": None, "attentionBackend": None,
                             "speculativeConfig": None, "maxModelLen": 4096})
    placement = kubernetes_placement(spec)
    assert placement["given"] is None
    assert placement["container"]["nodeSelector"] is None


def test_the_gpu_memory_reads_to_a_tenth_of_a_gib() -> None:
    """H100-80GB: 81,559 MiB as nvidia-smi reports it (the catalog's figure) is 79.65 GiB, shown 79.6."""
    gpu = deployment_plan(make_spec("a100", hardware={"gpu": "H100-80GB", "count": 10}), [])["gpu"]
    assert gpu["memoryGib"] == 79.6


def test_a_model_described_inline_is_named_as_such() -> None:
    # no catalog name and no config file: the plan says what the reader is looking at
    settings = edit(shipped_settings("v100"), model={"name": None, "architecture": MODELS["Qwen3.5-27B"]})
    assert deployment_plan(spec_of(settings), [])["model"]["name"] == "inline architecture"
