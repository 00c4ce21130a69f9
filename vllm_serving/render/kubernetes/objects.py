"""The Kubernetes objects of a stack, as plain dicts (the API's own camelCase shape).

`VllmKubernetes` turns them into provider resources and `vllm-stack render --format k8s` prints
them, so the preview and the cluster cannot drift. The container's args are `spec.args`, the same
argv the Docker backend runs. Same spec, byte-identical YAML: every list has a fixed order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import yaml

from vllm_serving.masking import shown
from vllm_serving.render.kubernetes.parts import (
    Obj,
    cache_claim,
    credentials_secret,
    object_meta,
    registry_secret,
    weights_claim,
)
from vllm_serving.render.kubernetes.workload import deployment, disruption_budget, network_policy, service
from vllm_serving.spec import ServingSpec


@dataclass(frozen=True)
class KubernetesObjects:
    """Every object of one deployment; absent ones are None."""

    namespace: Obj | None
    registry_secret: Obj | None
    credentials_secret: Obj | None
    weights_claim: Obj | None
    cache_claim: Obj | None
    deployment: Obj
    service: Obj
    network_policy: Obj | None
    disruption_budget: Obj | None

    def all(self) -> list[Obj]:
        """In apply order: namespace, secrets, claims, workload, Service, policy, budget."""
        found = (self.namespace, self.registry_secret, self.credentials_secret, self.weights_claim,
                 self.cache_claim, self.deployment, self.service, self.network_policy,
                 self.disruption_budget)
        return [o for o in found if o is not None]



def render_objects(spec: ServingSpec, secrets: Mapping[str, str] | None = None) -> KubernetesObjects:
    """All objects; secret values are masked unless `secrets` (config key -> value) has them."""
    k = spec.settings.kubernetes
    namespace: Obj | None = None
    if k.create_namespace:
        namespace = {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": object_meta(spec, k.namespace, "namespace", namespaced=False)}
    return KubernetesObjects(
        namespace=namespace,
        registry_secret=registry_secret(spec, shown(secrets, "registryPassword")),
        credentials_secret=credentials_secret(spec, secrets),
        weights_claim=weights_claim(spec),
        cache_claim=cache_claim(spec),
        deployment=deployment(spec, secrets),
        service=service(spec),
        network_policy=network_policy(spec),
        disruption_budget=disruption_budget(spec),
    )


def kubernetes_objects(spec: ServingSpec, secrets: Mapping[str, str] | None = None) -> list[Obj]:
    """The objects as a list in apply order."""
    return render_objects(spec, secrets).all()


def manifests_yaml(objects: list[Obj]) -> str:
    """Multi-document YAML, keys in the API's conventional order."""
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, width=120,
                              explicit_start=True)

