"""What to look at when a rollout does not finish: printed next to the resource that waits.

The providers' own errors name neither the start period nor the command that shows why (Docker:
"container exited unexpectedly" or a health timeout; Kubernetes: "minimum number of live Pods was
not attained"). The program attaches these lines to the waiting resource, and the stack exports
the logs command, so a failed `pulumi up` says where to look.
"""

from __future__ import annotations

import shlex
from typing import Any

from vllm_serving.render.docker_container import ContainerSpec, container_spec
from vllm_serving.render.kubernetes.pod_names import CONTAINER, selector
from vllm_serving.spec import ServingSpec


def docker_logs_command(container: ContainerSpec, docker_host: str | None) -> str:
    """`docker logs` for the server, against the stack's Docker host."""
    host = ["-H", docker_host] if docker_host else []
    return shlex.join(["docker", *host, "logs", "--tail", "200", container.name])


def kubernetes_logs_command(spec: ServingSpec) -> str:
    """`kubectl logs` for the server's pods (every replica, each line prefixed with its pod)."""
    labels = ",".join(f"{k}={v}" for k, v in sorted(selector(spec).items()))
    return shlex.join(["kubectl", "-n", spec.settings.kubernetes.namespace, "logs", "-l", labels,
                       "-c", CONTAINER, "--prefix", "--tail", "200"])


def server_logs_command(spec: ServingSpec) -> str:
    """The command that shows why a deployed server does not answer, for its target."""
    if spec.settings.target.kind == "kubernetes":
        return kubernetes_logs_command(spec)
    return docker_logs_command(container_spec(spec), spec.settings.target.docker_host)


def docker_never_healthy_hint(container: ContainerSpec, docker_host: str | None) -> str:
    """The line a failed `pulumi up` needs when the server never turns healthy."""
    start = container.healthcheck.start_period
    return (
        f"container {container.name} must answer GET /health within its start period ({start}); "
        f"Pulumi waits {container.wait_timeout_seconds} s in all. If `pulumi up` fails here, read "
        f"why vLLM did not start: {docker_logs_command(container, docker_host)} "
        "(docs/troubleshooting.md lists the usual causes); a model that loads slower needs "
        "container.startupTimeout"
    )


def kubernetes_pending_hint(namespace: str, instance: str, pod: dict[str, Any]) -> str:
    """The line a failed `pulumi up` needs when a pod stays Pending (usually: no node has the GPUs)."""
    limits = pod["containers"][0].get("resources", {}).get("limits", {})
    gpus = {name: count for name, count in limits.items() if "gpu" in name}
    ask = ", ".join(f"{count} x {name}" for name, count in sorted(gpus.items())) or "no GPU"
    node_selector: dict[str, str] = pod.get("nodeSelector", {})
    selector = ",".join(f"{k}={v}" for k, v in sorted(node_selector.items()))
    nodes = f"kubectl get nodes -l {shlex.quote(selector)}" if selector else "kubectl get nodes"
    return (
        f"each vLLM pod asks for {ask}" + (f" on nodes labelled {selector}" if selector else "")
        + ". If `pulumi up` times out with pods Pending, no node has that many free GPUs: "
        f"kubectl -n {namespace} describe pod -l app.kubernetes.io/instance={instance} (its Events "
        "say 'Insufficient ...' or 'didn't match Pod's node affinity/selector'); "
        f"{nodes}, then `kubectl describe node NODE` for the allocatable GPUs. Fix: lower "
        "hardware.count and engine.tensorParallelSize, or correct kubernetes.nodeSelector"
    )
