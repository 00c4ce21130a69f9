"""What `pulumi up` would do for a stack, computed offline: the deployment and its resources.

`vllm-stack plan` prints this; the mock-engine tests check that the program registers exactly
the resources listed here, so the plan cannot drift from the program.
"""

from __future__ import annotations

from typing import Any

from .capacity import plan_capacity
from .deployment_spec import DeploymentSpec
from .docker_container import container_spec
from .docker_run import docker_run_command
from .findings import Finding
from .settings import SECRET_KEYS
from .units import go_duration


def planned_docker_resources(spec: DeploymentSpec) -> list[tuple[str, str]]:
    """(type token, logical name) of every resource the Docker backend registers."""
    name = spec.name
    c = container_spec(spec)
    found = [
        ("vllm-serving:docker:VllmDeployment", name),
        ("pulumi:providers:docker", f"{name}-docker"),
        ("vllm-serving:docker:RegistryImage", f"{name}-image"),
        ("docker:index/remoteImage:RemoteImage", f"{name}-image"),
        ("vllm-serving:docker:ModelVolume", f"{name}-model"),
    ]
    if c.model_mount.kind == "volume":
        found.append(("docker:index/volume:Volume", f"{name}-model"))
    if c.cache_mount is not None:
        found.append(("vllm-serving:docker:CacheVolume", f"{name}-cache"))
        if c.cache_mount.kind == "volume":
            found.append(("docker:index/volume:Volume", f"{name}-cache"))
    found += [
        ("vllm-serving:docker:VllmServer", f"{name}-server"),
        ("docker:index/container:Container", f"{name}-server"),
    ]
    return found


def planned_kubernetes_resources(spec: DeploymentSpec) -> list[tuple[str, str]]:
    """(Pulumi type token, object name) of every Kubernetes object the backend applies."""
    from .kubernetes_manifests import kubernetes_objects

    found = [("vllm-serving:kubernetes:VllmKubernetes", spec.name)]
    for obj in kubernetes_objects(spec):
        group = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"
        found.append((f"kubernetes:{group}:{obj['kind']}", obj["metadata"]["name"]))
    return found


def deployment_plan(spec: DeploymentSpec, findings: list[Finding]) -> dict[str, Any]:
    """The plan as data (the CLI's `--json`); secrets appear only as set / not set."""
    s = spec.settings
    c = container_spec(spec)
    return {
        "stack": spec.stack,
        "target": {"kind": s.target.kind, "where": (
            f"namespace {s.kubernetes.namespace} of the current kubeconfig context"
            if s.target.kind == "kubernetes" else s.target.docker_host or "local Docker socket")},
        "gpu": {
            "name": spec.gpu.name,
            "computeCapability": f"{spec.gpu.compute_capability[0]}.{spec.gpu.compute_capability[1]}",
            "memoryGib": round(spec.gpu.memory_gib, 1),
            "hostCount": s.hardware.count,
            "given": c.gpus,
        },
        "model": {
            "name": s.model.name or s.model.architecture and s.model.architecture.architecture,
            "architecture": spec.model.architecture,
            "paramsBillion": spec.model.params_billion,
            "weightsGib": round(spec.model.total_weights_gib, 1),
            "quantization": spec.model.quantization,
            "servedModelName": spec.served_model_name,
        },
        "image": {"reference": c.image, "registryUser": s.image.username},
        "secrets": {key: ("set" if key in s.secrets_set else "not set") for key in SECRET_KEYS},
        "mounts": [
            {"kind": m.kind, "source": m.source, "target": m.target, "readOnly": m.read_only}
            for m in c.mounts
        ],
        "ports": [{"bindAddress": c.bind_address, "hostPort": c.host_port, "containerPort": c.container_port}],
        "container": {
            "name": c.name, "runtime": c.runtime, "ipcMode": c.ipc_mode, "shmSizeMb": c.shm_size_mb,
            "privileged": c.privileged, "restart": c.restart,
            "startupAllowance": go_duration(spec.startup_seconds),
        },
        "vllmArgs": list(spec.args),
        "env": dict(spec.env),
        "secretEnv": list(spec.secret_env),
        "endpoints": spec.endpoints(),
        "capacity": plan_capacity(spec).as_dict(),
        "findings": [f.as_dict() for f in findings],
        "resources": [{"type": t, "name": n} for t, n in (
            planned_kubernetes_resources(spec) if s.target.kind == "kubernetes"
            else planned_docker_resources(spec))],
        "dockerRunCommand": docker_run_command(c),
    }
