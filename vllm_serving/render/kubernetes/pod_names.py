"""What the server's pods and container are called and selected by, and the address env of a
multi-node server's pods: the facts the rules and the logs command read, apart from the renderer
(parts.py, workload.py, leader_worker_set.py), so a Docker stack's check or plan never loads it."""

from __future__ import annotations

from typing import Any

from vllm_serving.spec import ServingSpec

CONTAINER = "vllm"
"""The server's container in every pod (`kubectl logs -c`)."""


def selector(spec: ServingSpec) -> dict[str, str]:
    """The immutable part of the labels (the version changes on every upgrade)."""
    return {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": spec.name}


# vLLM binds its message queues to this address (vllm/utils/network_utils.py get_ip); on a pod
# network that is the pod's own IP.
HOST_IP_ENV: dict[str, Any] = {"name": "VLLM_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
# The LWS controller creates a headless Service named after the LeaderWorkerSet for the pods'
# DNS names (the leader address); the client Service keeps the stack's name, so they differ.
GROUP_SUFFIX = "-group"


def is_multi_node(spec: ServingSpec) -> bool:
    return spec.settings.target.kind == "kubernetes" and spec.settings.kubernetes.nodes > 1


def group_name(spec: ServingSpec) -> str:
    """The LeaderWorkerSet's name; pods are `<name>-<group>` (leader) and `<name>-<group>-<index>`."""
    return spec.name + GROUP_SUFFIX


def longest_pod_name(spec: ServingSpec) -> str:
    """The name (and hostname) of the last worker of the last group."""
    k = spec.settings.kubernetes
    return f"{group_name(spec)}-{k.replicas - 1}-{k.nodes - 1}"
