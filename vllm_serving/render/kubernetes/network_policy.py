"""The NetworkPolicy: only the API port, and only from the sources `kubernetes.allowFrom` lists.

vLLM's API key guards only /v1 paths (vllm/entrypoints/openai/server_utils.py
AuthenticationMiddleware), so who reaches the port matters even with a key. By default the
release's own namespace: an empty `podSelector` peer selects every pod of the policy's namespace.
"""

from __future__ import annotations

from vllm_serving.render.kubernetes.parts import Obj, object_meta
from vllm_serving.render.kubernetes.pod_names import selector
from vllm_serving.settings.kubernetes_peers import AllowFrom
from vllm_serving.spec import ServingSpec

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
"""Set by Kubernetes (1.22+) on every namespace, so a namespace can be selected by its name."""
OWN_NAMESPACE: Obj = {"podSelector": {}}


def _selector(labels: dict[str, str]) -> Obj:
    return {"matchLabels": dict(sorted(labels.items()))} if labels else {}


def peer(source: AllowFrom) -> Obj:
    """One NetworkPolicy peer."""
    if source.cidr is not None:
        return {"ipBlock": {"cidr": source.cidr}}
    found: Obj = {}
    if source.namespace is not None:
        found["namespaceSelector"] = _selector({NAMESPACE_NAME_LABEL: source.namespace})
    elif source.namespace_selector is not None:
        found["namespaceSelector"] = _selector(source.namespace_selector)
    if source.pod_selector is not None:
        found["podSelector"] = _selector(source.pod_selector)
    return found


def network_policy(spec: ServingSpec) -> Obj | None:
    """Only the API port is reachable, from `allowFrom`; vLLM's other sockets (ZMQ, NCCL,
    torch.distributed) stay closed."""
    k = spec.settings.kubernetes
    if not k.network_policy:
        return None
    sources = [peer(s) for s in k.allow_from] if k.allow_from is not None else [OWN_NAMESPACE]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": object_meta(spec, spec.name, "inference-server"),
            "spec": {"podSelector": {"matchLabels": selector(spec)}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": sources, "ports": [{"port": "http", "protocol": "TCP"}]}]}}
