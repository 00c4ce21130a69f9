"""The Kubernetes objects of a stack, as plain dicts (the API's own camelCase shape).

`VllmKubernetes` turns them into provider resources and `vllm-stack render --format k8s` prints
them, so the preview and the cluster cannot drift. The container's args are `spec.args`, the same
argv the Docker backend runs. Same spec, byte-identical YAML: every list has a fixed order.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
import yaml

from vllm_serving.masking import shown
from vllm_serving.render.kubernetes.leader_worker_set import group_network_policy, leader_service, leader_worker_set
from vllm_serving.render.kubernetes.monitoring import monitoring_objects
from vllm_serving.render.kubernetes.network_policy import network_policy
from vllm_serving.render.kubernetes.parts import (
    Obj,
    cache_claim,
    credentials_secret,
    object_meta,
    registry_secret,
    weights_claim,
)
from vllm_serving.render.kubernetes.pod_names import is_multi_node
from vllm_serving.render.kubernetes.workload import deployment, disruption_budget, service
from vllm_serving.spec import ServingSpec


class KubernetesObjects(msgspec.Struct, frozen=True):
    """Every object of one deployment; absent ones are None."""

    namespace: Obj | None
    registry_secret: Obj | None
    credentials_secret: Obj | None
    weights_claim: Obj | None
    cache_claim: Obj | None
    deployment: Obj | None
    """The workload of a server on one node; None when it spans nodes."""
    service: Obj
    network_policy: Obj | None
    disruption_budget: Obj | None
    leader_worker_set: Obj | None = None
    """The workload of a server that spans nodes (`kubernetes.nodes` > 1), instead of the Deployment."""

    @property
    def workload(self) -> Obj:
        """The Deployment or the LeaderWorkerSet."""
        found = self.deployment or self.leader_worker_set
        assert found is not None
        return found

    def all(self) -> list[Obj]:
        """In apply order: namespace, secrets, claims, workload, Service, policy, budget."""
        found = (self.namespace, self.registry_secret, self.credentials_secret, self.weights_claim,
                 self.cache_claim, self.workload, self.service, self.network_policy,
                 self.disruption_budget)
        return [o for o in found if o is not None]



def render_objects(spec: ServingSpec, secrets: Mapping[str, str] | None = None) -> KubernetesObjects:
    """All objects; secret values are masked unless `secrets` (config key -> value) has them."""
    k = spec.settings.kubernetes
    namespace: Obj | None = None
    if k.create_namespace:
        namespace = {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": object_meta(spec, k.namespace, "namespace", namespaced=False)}
    multi_node = is_multi_node(spec)
    return KubernetesObjects(
        namespace=namespace,
        registry_secret=registry_secret(spec, shown(secrets, "registryPassword")),
        credentials_secret=credentials_secret(spec, secrets),
        weights_claim=weights_claim(spec),
        cache_claim=cache_claim(spec),
        deployment=None if multi_node else deployment(spec, secrets),
        leader_worker_set=leader_worker_set(spec, secrets) if multi_node else None,
        service=leader_service(service(spec)) if multi_node else service(spec),
        network_policy=(group_network_policy(network_policy(spec), spec) if multi_node
                        else network_policy(spec)),
        disruption_budget=disruption_budget(spec),
    )


def kubernetes_objects(spec: ServingSpec, secrets: Mapping[str, str] | None = None) -> list[Obj]:
    """The objects as a list in apply order; the observability objects the stack turns on last."""
    return render_objects(spec, secrets).all() + monitoring_objects(spec)


class _ManifestDumper(yaml.SafeDumper):
    """No `&id001` anchors where two containers share an object (kubectl users read these), and
    multi-line strings (the preflight script) as literal blocks."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    literal = "\n" in value and not any(line != line.rstrip() for line in value.splitlines())
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if literal else None)


_ManifestDumper.add_representer(str, _text)


def manifests_yaml(objects: list[Obj]) -> str:
    """Multi-document YAML, keys in the API's conventional order."""
    return yaml.dump_all(objects, Dumper=_ManifestDumper, sort_keys=False, default_flow_style=False, width=120,
                         explicit_start=True)

