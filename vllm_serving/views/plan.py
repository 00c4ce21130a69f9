"""What `pulumi up` would do for a stack, computed offline: the deployment and its resources.

`vllm-stack plan` prints this; the mock-engine tests check that the program registers exactly
the resources listed here, so the plan cannot drift from the program.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vllm_serving.findings import Finding
from vllm_serving.planner.capacity import plan_capacity
from vllm_serving.planner.scale_out import scale_out, scale_out_view
from vllm_serving.release.carried import argv_fingerprint
from vllm_serving.render.docker_container import ContainerSpec, container_spec
from vllm_serving.render.docker_run import docker_run_command
from vllm_serving.settings import SECRET_KEYS
from vllm_serving.spec import ServingSpec
from vllm_serving.units import go_duration


def set_values(data: Mapping[str, Any]) -> dict[str, Any]:
    """The entries that are set: None stands for "not set" (vLLM's or Docker's default applies)
    and is left out of what a reader sees; `--json` keeps it, so the keys stay the same."""
    return {key: value for key, value in data.items() if value is not None}


def planned_docker_resources(spec: ServingSpec, name: str | None = None) -> list[tuple[str, str]]:
    """(type token, logical name) of every resource the Docker backend registers; `name` is the
    deployment's (a fleet host's, vllm_serving/fleet.py), else the container's."""
    name = name or spec.name
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
    if spec.settings.preflight.enabled:
        found += [("vllm-serving:docker:Preflight", f"{name}-preflight"),
                  ("docker:index/container:Container", f"{name}-preflight")]
    found += [
        ("vllm-serving:docker:VllmServer", f"{name}-server"),
        ("docker:index/container:Container", f"{name}-server"),
    ]
    return found


def _docker_placement(spec: ServingSpec, c: ContainerSpec) -> dict[str, Any]:
    """GPUs, mounts, ports and container settings as the Docker host gets them."""
    return {
        "given": c.gpus,
        "mounts": [{"kind": m.kind, "source": m.source, "target": m.target, "readOnly": m.read_only}
                   for m in c.mounts],
        "ports": [{"bindAddress": c.bind_address, "hostPort": c.host_port, "containerPort": c.container_port}],
        "container": {
            "name": c.name, "runtime": c.runtime, "ipcMode": c.ipc_mode, "shmSizeMb": c.shm_size_mb,
            "privileged": c.privileged, "restart": c.restart,
            "startupAllowance": go_duration(spec.startup_seconds),
        },
    }


def deployment_plan(spec: ServingSpec, findings: list[Finding]) -> dict[str, Any]:
    """The plan as data (the CLI's `--json`); secrets appear only as set / not set."""
    s = spec.settings
    c = container_spec(spec)
    layout = scale_out(s)
    on_kubernetes = s.target.kind == "kubernetes"
    if on_kubernetes:  # loaded here: a Docker stack's plan never needs the Kubernetes renderer
        from vllm_serving.views.kubernetes_plan import kubernetes_placement, planned_kubernetes_resources  # noqa: PLC0415
    placement = kubernetes_placement(spec) if on_kubernetes else _docker_placement(spec, c)
    return {
        "stack": spec.stack,
        "target": {"kind": s.target.kind, "where": (
            f"namespace {s.kubernetes.namespace} of the current kubeconfig context"
            if on_kubernetes else s.target.docker_host or "local Docker socket")},
        "gpu": {
            "name": spec.gpu.name,
            "computeCapability": f"{spec.gpu.compute_capability[0]}.{spec.gpu.compute_capability[1]}",
            "memoryGib": round(spec.gpu.memory_gib, 1),
            "hostCount": s.hardware.count,
            "given": placement["given"],
        },
        "model": {
            "name": s.model.name or s.model.config_file or "inline architecture",
            "architecture": spec.model.architecture,
            "paramsBillion": spec.model.params_billion,
            "weightsGib": round(spec.model.total_weights_gib, 1),
            "quantization": spec.model.quantization,
            "servedModelName": spec.served_model_name,
        },
        "image": {"reference": c.image, "registryUser": s.image.username},
        "release": {"promotedFrom": s.release.promote_from, "argvFingerprint": argv_fingerprint(s)},
        "secrets": {key: ("set" if key in s.secrets_set else "not set") for key in SECRET_KEYS},
        "mounts": placement["mounts"],
        "ports": placement["ports"],
        "container": placement["container"],
        "vllmArgs": list(spec.args),
        "env": dict(spec.env),
        "secretEnv": list(spec.secret_env),
        "endpoints": spec.endpoints(),
        "capacity": plan_capacity(spec).as_dict(),
        # replicas, nodes and data-parallel engines, when there is more than one engine or node
        **({"scaleOut": scale_out_view(layout, plan_capacity(spec))} if layout.scaled else {}),
        # each amount vLLM subtracts before sizing the KV cache, with the vLLM file it comes from
        "memoryBreakdown": plan_capacity(spec).memory_breakdown(),
        "findings": [f.as_dict() for f in findings],
        "resources": [{"type": t, "name": n} for t, n in (
            planned_kubernetes_resources(spec) if on_kubernetes else planned_docker_resources(spec))],
        "dockerRunCommand": docker_run_command(c),
    }
