"""The facts of a Kubernetes stack's plan (views/plan.py), read from the objects the backend
applies; apart so that a Docker stack's plan never loads the Kubernetes renderer."""

from __future__ import annotations

from typing import Any

from vllm_serving.render.kubernetes.objects import kubernetes_objects
from vllm_serving.render.kubernetes.workload import pod_gpus, pod_spec
from vllm_serving.spec import ServingSpec
from vllm_serving.units import go_duration


def planned_kubernetes_resources(spec: ServingSpec) -> list[tuple[str, str]]:
    """(Pulumi type token, object name) of every Kubernetes object the backend applies."""
    found = [("vllm-serving:kubernetes:VllmKubernetes", spec.name)]
    for obj in kubernetes_objects(spec):
        group = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"
        found.append((f"kubernetes:{group}:{obj['kind']}", obj["metadata"]["name"]))
    return found


def kubernetes_placement(spec: ServingSpec) -> dict[str, Any]:
    """The same facts as the pod gets them, read from the rendered pod spec."""
    k = spec.settings.kubernetes
    pod = pod_spec(spec)
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = []
    for m in pod["containers"][0]["volumeMounts"]:
        volume = volumes[m["name"]]
        kind = next(key for key in volume if key != "name")
        source = (volume[kind].get("claimName") or volume[kind].get("path")
                  or f"{volume[kind]['medium']} {volume[kind]['sizeLimit']}")
        mounts.append({"kind": kind, "source": source, "target": m["mountPath"],
                       "readOnly": m.get("readOnly", False)})
    return {
        "given": f"{pod_gpus(spec)} x {k.gpu_resource} per pod"
        if spec.settings.hardware.uses_gpus else None,  # None: a CPU target, no GPU
        "mounts": mounts,
        "ports": [{"service": f"{k.service.type} {spec.name}", "port": k.service.port,
                   "containerPort": spec.container_port}],
        "container": {
            "name": spec.name, "namespace": k.namespace, "replicas": k.replicas,
            "runtimeClassName": k.runtime_class_name, "nodeSelector": pod.get("nodeSelector"),
            "startupAllowance": go_duration(spec.startup_seconds),
        },
    }
