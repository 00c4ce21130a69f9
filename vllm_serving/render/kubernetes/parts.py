"""The parts every Kubernetes object of a stack shares: names, labels, secrets, claims, probe timing.

`VllmKubernetes` turns them into provider resources and `vllm-stack render --format k8s` prints
them, so the preview and the cluster cannot drift. The container's args are `spec.args`, the same
argv the Docker backend runs. Same spec, byte-identical YAML: every list has a fixed order.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

import msgspec
from pydantic import ValidationError

from vllm_serving import timing
from vllm_serving.engine.flags import SECRET_ENV
from vllm_serving.findings import ConfigError, Finding, Severity, config_key
from vllm_serving.masking import MASK, shown
from vllm_serving.settings.kubernetes import NewClaim, WeightsSettings
from vllm_serving.spec import ServingSpec
from vllm_serving.timing import startup_probe_failures
from vllm_serving.units import kubernetes_quantity

Obj = dict[str, Any]
DEFAULT_SHM_BYTES = 16 * 1024**3
DOCKER_HUB = "https://index.docker.io/v1/"
_LABEL_VALUE = re.compile(r"[^A-Za-z0-9_.-]")
_SERVICE_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")

# pulumi-kubernetes reads these annotations (provider/pkg/metadata/annotations.go); each must be
# exactly "true" (`IsAnnotationTrue`).
SKIP_AWAIT = "pulumi.com/skipAwait"
PATCH_FORCE = "pulumi.com/patchForce"
"""On every object: the stack's fields win a server-side-apply conflict (await.go `patchForce`), so
`pulumi up` after a `kubectl scale` or `kubectl edit` sets them back instead of failing, and a kept
namespace or claim is taken over by the next stack's apply. Fields the stack does not set stay
with whoever set them."""


def dockerconfigjson(registry: str, username: str, password: str) -> str:
    """The `.dockerconfigjson` of a pull secret."""
    auth = base64.b64encode(f"{username}:{password}".encode()).decode()
    entry = {"username": username, "password": password, "auth": auth}
    return json.dumps({"auths": {registry: entry}}, sort_keys=True, separators=(",", ":"))


def startup_failure_threshold(spec: ServingSpec) -> int:
    """Startup probe failures allowed: failureThreshold x period covers the model-size budget."""
    return startup_probe_failures(spec.startup_seconds)


def rollout_seconds(spec: ServingSpec) -> int:
    """How long a rollout may take: the model load plus pulling the image onto a new node."""
    return timing.rollout_seconds(spec.startup_seconds)


def weights_source(spec: ServingSpec) -> WeightsSettings:
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


def shm_bytes(spec: ServingSpec) -> int:
    s = spec.settings
    return s.kubernetes.shm_size or s.container.shm_size or DEFAULT_SHM_BYTES


class Names(msgspec.Struct, frozen=True):
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


def names(spec: ServingSpec) -> Names:
    if not _SERVICE_NAME.match(spec.name):
        raise ConfigError([Finding(
            "k8s-name", Severity.ERROR, config_key("container", "name"),
            f"'{spec.name}' cannot name a Kubernetes Service and Deployment",
            "use lower-case letters, digits and '-', starting with a letter, e.g. vllm")])
    return Names(spec.name, spec.settings.kubernetes.namespace)


def cache_claim_name(spec: ServingSpec) -> str | None:
    s = spec.settings
    if not s.cache.enabled:
        return None
    return (s.cache.volume_name or f"{spec.name}-cache").lower().replace("_", "-")


def labels(spec: ServingSpec, component: str) -> dict[str, str]:
    image = spec.settings.image
    version = image.tag or (image.digest or "").removeprefix("sha256:")[:12]
    return {
        "app.kubernetes.io/name": "vllm",
        "app.kubernetes.io/instance": spec.name,
        "app.kubernetes.io/version": _LABEL_VALUE.sub("-", version)[:63].strip("-_."),
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": "pulumi",
    }


def object_meta(spec: ServingSpec, name: str, component: str, namespaced: bool = True) -> Obj:
    meta: Obj = {"name": name}
    if namespaced:
        meta["namespace"] = spec.settings.kubernetes.namespace
    meta["labels"] = labels(spec, component)
    meta["annotations"] = {PATCH_FORCE: "true"}
    return meta


def _claim(spec: ServingSpec, name: str, component: str, size: int, mode: str,
           storage_class: str | None) -> Obj:
    claim_spec: Obj = {"accessModes": [mode], "resources": {"requests": {"storage": kubernetes_quantity(size)}}}
    if storage_class is not None:
        claim_spec["storageClassName"] = storage_class
    claim_spec["volumeMode"] = "Filesystem"
    meta = object_meta(spec, name, component)
    # pulumi-kubernetes awaits a new claim until Bound (await/awaiters.go
    # `untilCoreV1PersistentVolumeClaimReady`, 5 minutes): under a WaitForFirstConsumer class it
    # accepts Pending only when it may read the StorageClass, and the workload that would bind the
    # claim waits for it. The workload's own await checks its claims (await/deployment.go
    # `checkPersistentVolumeClaimStatus`; a LeaderWorkerSet's pods are not ready without them).
    meta["annotations"][SKIP_AWAIT] = "true"
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": claim_spec}


def _secret(spec: ServingSpec, name: str, kind: str, data: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": object_meta(spec, name, "credentials"),
            "type": kind, "stringData": data}


def registry_secret(spec: ServingSpec, password: str = MASK) -> Obj | None:
    image = spec.settings.image
    if image.username is None or "registryPassword" not in spec.settings.secrets_set:
        return None
    config = dockerconfigjson(image.registry or DOCKER_HUB, image.username, password)
    return _secret(spec, names(spec).registry_secret, "kubernetes.io/dockerconfigjson",
                   {".dockerconfigjson": config})


def secret_env_keys(spec: ServingSpec) -> dict[str, str]:
    """Env var -> secret config key, for the secrets this stack sets."""
    by_env = {env: key for key, env in SECRET_ENV.items()}
    return {env: by_env[env] for env in spec.secret_env}


SECRETS_CHECKSUM = "vllm-serving/credentials-checksum"
"""Pod-template annotation: a changed API key or HF token changes it, which rolls the pods (a
Secret's new value alone does not reach pods that read it through secretKeyRef)."""


def credentials_checksum(spec: ServingSpec, secrets: Mapping[str, str] | None = None) -> str | None:
    """A slow salted hash of the credentials the pods read; None without credentials, or when
    their values are not all given (offline, masked: a hash of the mask would say nothing).

    PBKDF2 rather than a bare SHA-256: the annotation is plain text in the cluster and in diffs,
    and a weak value must not be cheap to guess from it.
    """
    keys = secret_env_keys(spec)
    if not keys or secrets is None or any(key not in secrets for key in keys.values()):
        return None
    material = "\0".join(f"{env}={secrets[key]}" for env, key in sorted(keys.items()))
    salt = f"vllm-serving/{spec.settings.kubernetes.namespace}/{spec.name}".encode()
    return hashlib.pbkdf2_hmac("sha256", material.encode(), salt, 200_000).hex()[:32]


def credentials_secret(spec: ServingSpec, secrets: Mapping[str, str] | None = None) -> Obj | None:
    if not spec.secret_env:
        return None
    data = {env: shown(secrets, key) for env, key in secret_env_keys(spec).items()}
    return _secret(spec, names(spec).credentials_secret, "Opaque", data)


def weights_claim(spec: ServingSpec) -> Obj | None:
    claim: NewClaim | None = weights_source(spec).claim
    if claim is None:
        return None
    return _claim(spec, names(spec).weights_claim, "model-weights", claim.size, claim.access_mode,
                  claim.storage_class_name)


def cache_claim(spec: ServingSpec) -> Obj | None:
    name = cache_claim_name(spec)
    if name is None:
        return None
    k = spec.settings.kubernetes
    if k.pods > 1 and k.cache.access_mode in ("ReadWriteOnce", "ReadWriteOncePod"):
        raise ConfigError([Finding(
            "k8s-cache-shared", Severity.ERROR, config_key("kubernetes", "cache", "accessMode"),
            f"{k.pods} pods on different GPU nodes cannot share a {k.cache.access_mode} claim",
            "set kubernetes.cache.accessMode: ReadWriteMany (an RWX storage class), one pod "
            "(replicas: 1, nodes: 1), or cache.enabled: false")])
    return _claim(spec, name, "compile-cache", k.cache.size, k.cache.access_mode,
                  k.cache.storage_class_name)
