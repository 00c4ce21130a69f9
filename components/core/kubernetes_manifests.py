"""The Kubernetes objects of a deployment, as plain dicts (the API's own camelCase shape).

`VllmKubernetes` turns them into provider resources and `vllm-stack render --format k8s` prints
them, so the preview and the cluster cannot drift. The container's args are `spec.args`, the same
argv the Docker backend runs. Same spec, byte-identical YAML: every list has a fixed order.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from .deployment_spec import DeploymentSpec
from .docker_container import MASK
from .findings import ConfigError, Finding, Severity, config_key
from .kubernetes_settings import NewClaim, WeightsSettings
from .units import kubernetes_quantity
from .vllm_command import SECRET_ENV

Obj = dict[str, Any]
DEFAULT_SHM_BYTES = 16 * 1024**3
DOCKER_HUB = "https://index.docker.io/v1/"
# Probes: the startup probe alone covers the model load, so liveness never kills a loading model.
STARTUP_PERIOD_SECONDS = 10
READINESS = {"periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3}
LIVENESS = {"periodSeconds": 30, "timeoutSeconds": 10, "failureThreshold": 3}
# On top of the model load: scheduling and pulling a ~20 GB image onto a fresh node.
IMAGE_PULL_ALLOWANCE_SECONDS = 900
_LABEL_VALUE = re.compile(r"[^A-Za-z0-9_.-]")
_SERVICE_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")


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


def dockerconfigjson(registry: str, username: str, password: str) -> str:
    """The `.dockerconfigjson` of a pull secret."""
    auth = base64.b64encode(f"{username}:{password}".encode()).decode()
    entry = {"username": username, "password": password, "auth": auth}
    return json.dumps({"auths": {registry: entry}}, sort_keys=True, separators=(",", ":"))


def startup_failure_threshold(spec: DeploymentSpec) -> int:
    """Startup probe failures allowed: failureThreshold x period covers the model-size budget."""
    return math.ceil(spec.startup_seconds / STARTUP_PERIOD_SECONDS)


def rollout_seconds(spec: DeploymentSpec) -> int:
    """How long a rollout may take: the model load plus pulling the image onto a new node."""
    return spec.startup_seconds + IMAGE_PULL_ALLOWANCE_SECONDS


def weights_source(spec: DeploymentSpec) -> WeightsSettings:
    """`kubernetes.weights`, else the model section: a volume name is a PVC, a host path a node path."""
    k = spec.settings.kubernetes
    if k.weights is not None:
        return k.weights
    m = spec.settings.model
    if m.volume_name is not None:
        try:
            return WeightsSettings(existing_claim=m.volume_name)
        except ValidationError:
            raise ConfigError([Finding(
                "k8s-name", Severity.ERROR, config_key("model", "volumeName"),
                f"'{m.volume_name}' cannot name a PersistentVolumeClaim",
                "use lower-case letters, digits, '-' and '.', or set kubernetes.weights")]) from None
    return WeightsSettings(host_path=m.host_path)


def shm_bytes(spec: DeploymentSpec) -> int:
    s = spec.settings
    return s.kubernetes.shm_size or s.container.shm_size or DEFAULT_SHM_BYTES


@dataclass(frozen=True)
class Names:
    """Object names, derived from the container name."""

    base: str
    namespace: str

    @property
    def registry_secret(self) -> str:
        return f"{self.base}-registry"

    @property
    def credentials_secret(self) -> str:
        return f"{self.base}-credentials"

    @property
    def weights_claim(self) -> str:
        return f"{self.base}-weights"


def names(spec: DeploymentSpec) -> Names:
    if not _SERVICE_NAME.match(spec.name):
        raise ConfigError([Finding(
            "k8s-name", Severity.ERROR, config_key("container", "name"),
            f"'{spec.name}' cannot name a Kubernetes Service and Deployment",
            "use lower-case letters, digits and '-', starting with a letter, e.g. vllm")])
    return Names(spec.name, spec.settings.kubernetes.namespace)


def cache_claim_name(spec: DeploymentSpec) -> str | None:
    s = spec.settings
    if not s.cache.enabled:
        return None
    return (s.cache.volume_name or f"{spec.name}-cache").lower().replace("_", "-")


def labels(spec: DeploymentSpec, component: str) -> dict[str, str]:
    image = spec.settings.image
    version = image.tag or (image.digest or "").removeprefix("sha256:")[:12]
    return {
        "app.kubernetes.io/name": "vllm",
        "app.kubernetes.io/instance": spec.name,
        "app.kubernetes.io/version": _LABEL_VALUE.sub("-", version)[:63].strip("-_."),
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": "pulumi",
    }


def selector(spec: DeploymentSpec) -> dict[str, str]:
    """The immutable part of the labels (the version changes on every upgrade)."""
    return {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": spec.name}


def object_meta(spec: DeploymentSpec, name: str, component: str, namespaced: bool = True) -> Obj:
    meta: Obj = {"name": name}
    if namespaced:
        meta["namespace"] = spec.settings.kubernetes.namespace
    meta["labels"] = labels(spec, component)
    return meta


def _claim(spec: DeploymentSpec, name: str, component: str, size: int, mode: str,
           storage_class: str | None) -> Obj:
    claim_spec: Obj = {"accessModes": [mode], "resources": {"requests": {"storage": kubernetes_quantity(size)}}}
    if storage_class is not None:
        claim_spec["storageClassName"] = storage_class
    claim_spec["volumeMode"] = "Filesystem"
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": object_meta(spec, name, component), "spec": claim_spec}


def _secret(spec: DeploymentSpec, name: str, kind: str, data: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": object_meta(spec, name, "credentials"),
            "type": kind, "stringData": data}


def registry_secret(spec: DeploymentSpec, password: str = MASK) -> Obj | None:
    image = spec.settings.image
    if image.username is None or "registryPassword" not in spec.settings.secrets_set:
        return None
    config = dockerconfigjson(image.registry or DOCKER_HUB, image.username, password)
    return _secret(spec, names(spec).registry_secret, "kubernetes.io/dockerconfigjson",
                   {".dockerconfigjson": config})


def secret_env_keys(spec: DeploymentSpec) -> dict[str, str]:
    """Env var -> secret config key, for the secrets this stack sets."""
    by_env = {env: key for key, env in SECRET_ENV.items()}
    return {env: by_env[env] for env in spec.secret_env}


def credentials_secret(spec: DeploymentSpec, secrets: Mapping[str, str] | None = None) -> Obj | None:
    if not spec.secret_env:
        return None
    data = {env: (secrets or {}).get(key, MASK) for env, key in secret_env_keys(spec).items()}
    return _secret(spec, names(spec).credentials_secret, "Opaque", data)


def _weights_claim(spec: DeploymentSpec) -> Obj | None:
    claim: NewClaim | None = weights_source(spec).claim
    if claim is None:
        return None
    return _claim(spec, names(spec).weights_claim, "model-weights", claim.size, claim.access_mode,
                  claim.storage_class_name)


def _cache_claim(spec: DeploymentSpec) -> Obj | None:
    name = cache_claim_name(spec)
    if name is None:
        return None
    k = spec.settings.kubernetes
    if k.replicas > 1 and k.cache.access_mode in ("ReadWriteOnce", "ReadWriteOncePod"):
        raise ConfigError([Finding(
            "k8s-cache-shared", Severity.ERROR, config_key("kubernetes", "cache", "accessMode"),
            f"{k.replicas} replicas on different GPU nodes cannot share a {k.cache.access_mode} claim",
            "set kubernetes.cache.accessMode: ReadWriteMany (an RWX storage class), replicas: 1, "
            "or cache.enabled: false")])
    return _claim(spec, name, "compile-cache", k.cache.size, k.cache.access_mode,
                  k.cache.storage_class_name)


def render_objects(spec: DeploymentSpec, secrets: Mapping[str, str] | None = None) -> KubernetesObjects:
    """All objects; secret values are masked unless `secrets` (config key -> value) has them."""
    # the workload module imports this one's helpers: import it when rendering
    from .kubernetes_workload import deployment, disruption_budget, network_policy, service

    k = spec.settings.kubernetes
    namespace: Obj | None = None
    if k.create_namespace:
        namespace = {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": object_meta(spec, k.namespace, "namespace", namespaced=False)}
    return KubernetesObjects(
        namespace=namespace,
        registry_secret=registry_secret(spec, (secrets or {}).get("registryPassword", MASK)),
        credentials_secret=credentials_secret(spec, secrets),
        weights_claim=_weights_claim(spec),
        cache_claim=_cache_claim(spec),
        deployment=deployment(spec),
        service=service(spec),
        network_policy=network_policy(spec),
        disruption_budget=disruption_budget(spec),
    )


def kubernetes_objects(spec: DeploymentSpec, secrets: Mapping[str, str] | None = None) -> list[Obj]:
    """The objects as a list in apply order."""
    return render_objects(spec, secrets).all()


def manifests_yaml(objects: list[Obj]) -> str:
    """Multi-document YAML, keys in the API's conventional order."""
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, width=120,
                              explicit_start=True)

