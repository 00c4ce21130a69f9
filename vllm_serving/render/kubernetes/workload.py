"""The Deployment, Service, NetworkPolicy and PodDisruptionBudget of a Kubernetes deployment, as dicts.

Split from `kubernetes_manifests` (names, labels, secrets, claims) to keep both readable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vllm_serving.render.kubernetes.parts import (
    SECRETS_CHECKSUM,
    SKIP_AWAIT,
    Obj,
    cache_claim_name,
    credentials_checksum,
    labels,
    names,
    object_meta,
    registry_secret,
    rollout_seconds,
    secret_env_keys,
    shm_bytes,
    startup_failure_threshold,
    weights_source,
)
from vllm_serving.render.kubernetes.pod_names import CONTAINER, selector
from vllm_serving.render.kubernetes.preflight import preflight_init_containers
from vllm_serving.settings import VLLM_CACHE_PATH
from vllm_serving.spec import ServingSpec
from vllm_serving.timing import LIVENESS, READINESS, STARTUP_PROBE_PERIOD_SECONDS, STARTUP_PROBE_TIMEOUT_SECONDS
from vllm_serving.units import kubernetes_quantity


def _probe(**timing: int) -> Obj:
    return {"httpGet": {"path": "/health", "port": "http", "scheme": "HTTP"}, **timing}


def probes(spec: ServingSpec) -> dict[str, Obj]:
    """Startup covers the whole load; readiness and liveness start only after it succeeded."""
    return {
        "startupProbe": _probe(periodSeconds=STARTUP_PROBE_PERIOD_SECONDS, timeoutSeconds=STARTUP_PROBE_TIMEOUT_SECONDS,
                               failureThreshold=startup_failure_threshold(spec)),
        "readinessProbe": _probe(**READINESS),
        "livenessProbe": _probe(**LIVENESS),
    }


def _env(spec: ServingSpec) -> list[Obj]:
    env: list[Obj] = [{"name": name, "value": value} for name, value in spec.env]
    secret = names(spec).credentials_secret
    env += [{"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": name}}}
            for name in secret_env_keys(spec)]
    return env


def pod_gpus(spec: ServingSpec) -> int:
    """GPUs of one pod: the server's TP x PP x DP, shared out over its nodes (one pod per node;
    the rules make a multi-node share equal hardware.count)."""
    return spec.settings.engine.gpus_needed // spec.settings.kubernetes.nodes


def _resources(spec: ServingSpec) -> Obj:
    r = spec.settings.kubernetes.resources
    gpus = str(pod_gpus(spec))
    requests: dict[str, str] = {}
    if r.cpu is not None:
        requests["cpu"] = r.cpu
    if r.memory is not None:
        requests["memory"] = kubernetes_quantity(r.memory)
    # a CPU target asks the scheduler for no GPU
    limits = {spec.settings.kubernetes.gpu_resource: gpus} if spec.settings.hardware.uses_gpus else {}
    if r.memory_limit is not None:
        limits["memory"] = kubernetes_quantity(r.memory_limit)
    return {name: part for name, part in (("requests", requests), ("limits", limits)) if part}


def _volumes(spec: ServingSpec) -> tuple[list[Obj], list[Obj]]:
    """(volumes, mounts): weights read-only, compile cache, and /dev/shm in memory."""
    source = weights_source(spec)
    weights: Obj = {"name": "weights"}
    if source.host_path is not None:
        weights["hostPath"] = {"path": source.host_path, "type": "Directory"}
    else:
        claim = source.existing_claim or names(spec).weights_claim
        weights["persistentVolumeClaim"] = {"claimName": claim, "readOnly": True}
    volumes = [weights]
    mounts: list[Obj] = [{"name": "weights", "mountPath": spec.settings.model.mount_path, "readOnly": True}]
    cache = cache_claim_name(spec)
    if cache is not None:
        volumes.append({"name": "compile-cache", "persistentVolumeClaim": {"claimName": cache}})
        mounts.append({"name": "compile-cache", "mountPath": VLLM_CACHE_PATH})
    shm = kubernetes_quantity(shm_bytes(spec))
    volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}})
    mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    return volumes, mounts


# The official image runs as root and writes to /root/.cache, ~/.triton and /tmp while it
# compiles kernels, so runAsNonRoot and readOnlyRootFilesystem cannot be forced; everything
# else is locked down (no privilege escalation, no capabilities, the runtime's seccomp profile).
CONTAINER_SECURITY: Obj = {
    "allowPrivilegeEscalation": False,
    "privileged": False,
    "readOnlyRootFilesystem": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def container(spec: ServingSpec) -> Obj:
    _, mounts = _volumes(spec)
    env = _env(spec)
    return {
        "name": CONTAINER,
        "image": spec.settings.image.reference,
        "imagePullPolicy": "IfNotPresent",
        "args": list(spec.args),
        "ports": [{"name": "http", "containerPort": spec.container_port, "protocol": "TCP"}],
        **({"env": env} if env else {}),
        "resources": _resources(spec),
        "volumeMounts": mounts,
        **probes(spec),
        "securityContext": CONTAINER_SECURITY,
    }


def pod_spec(spec: ServingSpec) -> Obj:
    k = spec.settings.kubernetes
    volumes, _ = _volumes(spec)
    pull = ([names(spec).registry_secret] if registry_secret(spec) else []) + list(k.image_pull_secrets)
    pod: Obj = {
        # A Service named `vllm` would inject VLLM_PORT=tcp://..., which vLLM reads as its own port.
        "enableServiceLinks": False,
        "automountServiceAccountToken": False,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "terminationGracePeriodSeconds": k.termination_grace_period_seconds,
    }
    gpu = spec.settings.hardware.uses_gpus  # a CPU pod needs neither a GPU node nor its taint
    node_selector = k.node_selector if k.node_selector is not None or not gpu else {
        "nvidia.com/gpu.product": spec.gpu.product_label}
    if node_selector:
        pod["nodeSelector"] = dict(sorted(node_selector.items()))
    tolerations = k.tolerations if gpu or "tolerations" in k.model_fields_set else ()
    if tolerations:
        pod["tolerations"] = [t.model_dump(by_alias=True, exclude_none=True) for t in tolerations]
    if k.runtime_class_name is not None:
        pod["runtimeClassName"] = k.runtime_class_name
    if pull:
        pod["imagePullSecrets"] = [{"name": name} for name in pull]
    server = container(spec)
    init = preflight_init_containers(spec, server, pod_gpus(spec))
    if init:
        pod["initContainers"] = init
    pod["containers"] = [server]
    pod["volumes"] = volumes
    return pod


def _strategy(replicas: int) -> Obj:
    """A surge pod asks for GPUs the cluster does not have: never surge."""
    if replicas == 1:
        return {"type": "Recreate"}
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


def server_annotations(spec: ServingSpec, secrets: Mapping[str, str] | None = None) -> dict[str, str]:
    """Pod-template annotations of the pod that serves the API: scraping, and the credentials' checksum."""
    annotations = {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(spec.container_port),
        "prometheus.io/path": "/metrics",
        "kubectl.kubernetes.io/default-container": CONTAINER,
    }
    checksum = credentials_checksum(spec, secrets)
    if checksum is not None:
        annotations[SECRETS_CHECKSUM] = checksum
    return annotations


def deployment(spec: ServingSpec, secrets: Mapping[str, str] | None = None) -> Obj:
    k = spec.settings.kubernetes
    template: Obj = {"metadata": {"labels": labels(spec, "inference-server"),
                                  "annotations": server_annotations(spec, secrets)},
                     "spec": pod_spec(spec)}
    body: dict[str, Any] = {
        "replicas": k.replicas,
        "revisionHistoryLimit": 3,
        # Past this the rollout counts as failed (Pulumi's await too): the default 600 s is less
        # than a 27B model's load.
        "progressDeadlineSeconds": rollout_seconds(spec),
        "selector": {"matchLabels": selector(spec)},
        "strategy": _strategy(k.replicas),
        "template": template,
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": object_meta(spec, spec.name, "inference-server"), "spec": body}


def service(spec: ServingSpec) -> Obj:
    svc = spec.settings.kubernetes.service
    port: Obj = {"name": "http", "port": svc.port, "targetPort": "http", "protocol": "TCP"}
    if svc.node_port is not None:
        port["nodePort"] = svc.node_port
    meta = object_meta(spec, spec.name, "inference-server")
    # Pulumi would await ready endpoints for 10 minutes while the model loads for longer; the
    # Deployment's own await (with its long timeout) is what tells whether the server came up.
    meta["annotations"][SKIP_AWAIT] = "true"
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta,
            "spec": {"type": svc.type, "selector": selector(spec), "ports": [port]}}


def disruption_budget(spec: ServingSpec) -> Obj | None:
    """With several replicas, a node drain takes at most one server away at a time."""
    if spec.settings.kubernetes.replicas < 2:
        return None
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": object_meta(spec, spec.name, "inference-server"),
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": selector(spec)}}}

