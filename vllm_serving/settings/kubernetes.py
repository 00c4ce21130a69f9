"""The `vllm-serving:kubernetes` section: how a stack with `target.kind: kubernetes` is deployed.

The engine flags, the image, the model and the GPU stay in their own sections: Kubernetes adds
only what a cluster needs (namespace, scheduling, volumes, Service). Every default is chosen so
that a 27B model survives its load, an upgrade never asks for GPUs the cluster does not have and
the weights are never written or deleted by the deployment.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from vllm_serving.settings.base import Section, SizeBytes, fix_error
from vllm_serving.settings.kubernetes_peers import AllowFrom
from vllm_serving.settings.kubernetes_rdma import RESOURCE_NAME, RdmaSettings
from vllm_serving.settings.text_checks import LABEL_KEY, LABEL_VALUE, absolute_path, check_text, label_pairs
from vllm_serving.units import GIB

# Whole-value patterns, applied with fullmatch (settings/text_checks.py says why).
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
_RESOURCE_NAME = RESOURCE_NAME
_CPU = re.compile(r"(\d+(\.\d+)?|\d+m)")
NODE_PORTS = (30000, 32767)
AccessMode = Literal["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]


def _dns_name(value: str | None, what: str) -> str | None:
    if value is not None and not _DNS_SUBDOMAIN.fullmatch(value):
        raise fix_error(f"{value!r} is not a valid Kubernetes {what} name",
                        "use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit")
    return value


def _secret_name(value: str) -> str:
    _dns_name(value, "Secret")
    return value


class Toleration(Section):
    """One pod toleration, as in the Kubernetes API."""

    key: str | None = None
    """Taint key, e.g. `nvidia.com/gpu`; absent (with operator Exists) tolerates every taint."""
    operator: Literal["Equal", "Exists"] = "Equal"
    """`Equal` matches key and value, `Exists` only the key."""
    value: str | None = None
    """Taint value for operator `Equal`."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    """Taint effect to tolerate; every effect when absent."""
    toleration_seconds: int | None = Field(default=None, ge=0)
    """How long a NoExecute taint is tolerated before eviction; forever when absent."""

    @field_validator("key", "value")
    @classmethod
    def _label_syntax(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None:
            pattern = LABEL_KEY if info.field_name == "key" else LABEL_VALUE
            check_text(value, pattern, f"{value!r} is not a valid taint {info.field_name}",
                       "write it as the node's taint shows it (kubectl describe node), e.g. nvidia.com/gpu")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Toleration:
        if self.operator == "Exists" and self.value is not None:
            raise fix_error("a toleration with operator Exists cannot have a value",
                            "remove value, or use operator: Equal", field="value")
        if self.key is None and self.operator != "Exists":
            raise fix_error("a toleration without a key must use operator Exists",
                            "add key (e.g. nvidia.com/gpu) or set operator: Exists", field="key")
        if self.toleration_seconds is not None and self.effect != "NoExecute":
            raise fix_error("tolerationSeconds applies only to effect NoExecute",
                            "remove tolerationSeconds or set effect: NoExecute", field="tolerationSeconds")
        return self


GPU_TOLERATION = Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")


class _ClaimSettings(Section):
    """What every PersistentVolumeClaim the deployment creates has; never deleted by destroy."""

    storage_class_name: str | None = None
    """Storage class; the cluster's default class when absent."""
    access_mode: AccessMode = "ReadWriteOnce"
    """Access mode; replicas on several nodes need ReadOnlyMany (weights) or ReadWriteMany."""

    @field_validator("storage_class_name")
    @classmethod
    def _class(cls, value: str | None) -> str | None:
        return _dns_name(value, "storage class")


class NewClaim(_ClaimSettings):
    """A PersistentVolumeClaim the deployment creates (empty) for the weights."""

    size: SizeBytes
    """Capacity, e.g. `64g` (Docker notation, binary units): the checkpoint plus headroom."""


class WeightsSettings(Section):
    """Where the pod finds the weights; always mounted read-only at `model.containerPath`."""

    existing_claim: str | None = None
    """An existing PVC that already holds the weights (e.g. filled by a loader Job)."""
    claim: NewClaim | None = None
    """Create an (empty) PVC: fill it once before the first start; `destroy` keeps it."""
    host_path: str | None = None
    """A directory present on every GPU node (local disk or a node-mounted NFS)."""

    @field_validator("existing_claim")
    @classmethod
    def _claim_name(cls, value: str | None) -> str | None:
        return _dns_name(value, "PersistentVolumeClaim")

    @field_validator("host_path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return absolute_path(value, "node path")

    @model_validator(mode="after")
    def _exactly_one(self) -> WeightsSettings:
        given = [k for k, v in (("existingClaim", self.existing_claim), ("claim", self.claim),
                                ("hostPath", self.host_path)) if v is not None]
        if len(given) != 1:
            raise fix_error(f"give exactly one weights source, got {given or 'none'}",
                            "keep one of existingClaim, claim or hostPath", field="existingClaim")
        return self


class CacheClaim(_ClaimSettings):
    """The PVC for vLLM's compile cache, kept across upgrades so restarts skip torch.compile."""

    size: SizeBytes = 20 * GIB
    """Capacity; compiled graphs of one model and version take a few GiB."""


class ServiceSettings(Section):
    """The Service in front of the pods."""

    type: Literal["ClusterIP", "NodePort", "LoadBalancer"] = "ClusterIP"
    """ClusterIP (in-cluster only, default), NodePort or LoadBalancer."""
    port: int = Field(default=8000, ge=1, le=65535)
    """Service port; the container port stays 8000."""
    node_port: int | None = Field(default=None, ge=NODE_PORTS[0], le=NODE_PORTS[1])
    """Fixed node port (30000-32767) for NodePort or LoadBalancer; allocated when absent."""

    @model_validator(mode="after")
    def _node_port_needs_type(self) -> ServiceSettings:
        if self.node_port is not None and self.type == "ClusterIP":
            raise fix_error("a ClusterIP Service has no node port",
                            "set kubernetes.service.type: NodePort, or remove nodePort", field="nodePort")
        return self


class ResourceSettings(Section):
    """CPU and memory for the vLLM container (the GPUs come from TP x PP)."""

    cpu: str | None = None
    """CPU request, e.g. `16` or `500m`; no CPU limit is set (it would throttle the scheduler loop)."""
    memory: SizeBytes | None = None
    """Memory request, e.g. `64g`."""
    memory_limit: SizeBytes | None = None
    """Memory limit; /dev/shm (a memory emptyDir) counts against it."""

    @field_validator("cpu", mode="before")
    @classmethod
    def _cpu_number(cls, value: object) -> object:
        """`cpu: 16`, as Kubernetes manifests write it too: the quantity "16"."""
        return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    @field_validator("cpu")
    @classmethod
    def _cpu(cls, value: str | None) -> str | None:
        if value is not None and not _CPU.fullmatch(value):
            raise fix_error(f"{value!r} is not a CPU quantity",
                            "write whole or decimal cores ('16', '2.5') or millicores ('500m')")
        return value

    @model_validator(mode="after")
    def _request_within_limit(self) -> ResourceSettings:
        if self.memory is not None and self.memory_limit is not None and self.memory > self.memory_limit:
            raise fix_error("the memory request exceeds the memory limit",
                            "raise memoryLimit or lower memory", field="memoryLimit")
        return self


class KubernetesSettings(Section):
    """A Kubernetes cluster as the target (`target.kind: kubernetes`)."""

    namespace: str = "vllm"
    """Namespace of every object."""
    create_namespace: bool = True
    """Create the namespace (false when it exists already or is managed elsewhere)."""
    replicas: int = Field(default=1, ge=1, le=64)
    """Independent vLLM servers behind the Service, each with TP x PP GPUs (with `nodes` > 1: groups of pods)."""
    nodes: int = Field(default=1, ge=1, le=64)
    """Nodes one server spans: > 1 renders a LeaderWorkerSet of `nodes` pods with hardware.count GPUs each."""
    multi_node_backend: Literal["mp"] = "mp"
    """How the nodes of a server join: `mp`, vLLM's own launcher (--nnodes/--node-rank/--headless); no Ray."""
    gpu_resource: str = "nvidia.com/gpu"
    """Extended resource name of one GPU, as the device plugin advertises it."""
    node_selector: dict[str, str] | None = None
    """Node labels the pod requires; `{nvidia.com/gpu.product: <catalog label>}` when absent, `{}` for none."""
    tolerations: tuple[Toleration, ...] = (GPU_TOLERATION,)
    """Taints the pod tolerates; by default the usual `nvidia.com/gpu` NoSchedule taint of GPU nodes."""
    runtime_class_name: str | None = None
    """RuntimeClass, e.g. `nvidia` where the NVIDIA runtime is not the node default."""
    weights: WeightsSettings | None = None
    """Weights source; from the model section when absent (`volumeName` = existing PVC, `hostPath` = node path)."""
    cache: CacheClaim = Field(default_factory=CacheClaim)
    """The compile-cache PVC (when `cache.enabled`), named `cache.volumeName` or `<container name>-cache`."""
    shm_size: SizeBytes | None = None
    """Size of /dev/shm (a memory emptyDir); `container.shmSize`, else 16g, when absent."""
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    """The Service."""
    network_policy: bool = True
    """Add a NetworkPolicy that admits traffic to the pods only on the API port (8000), from `allowFrom`."""
    allow_from: tuple[AllowFrom, ...] | None = None
    """Who the NetworkPolicy admits; pods of the release's own namespace when absent."""
    termination_grace_period_seconds: int = Field(default=60, ge=0, le=3600)
    """Time between SIGTERM and SIGKILL, for vLLM to finish requests and free the GPUs."""
    image_pull_secrets: tuple[Annotated[str, AfterValidator(_secret_name)], ...] = ()
    """Existing pull secrets to add to the one built from `image.username` and `registryPassword`."""
    resources: ResourceSettings = Field(default_factory=ResourceSettings)
    """CPU and memory requests and the memory limit."""
    rdma: RdmaSettings | None = None
    """GPUDirect RDMA for a multi-node server (`nodes` > 1): IPC_LOCK, an RDMA device, NCCL variables."""

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        if not _DNS_LABEL.fullmatch(value):
            raise fix_error(f"{value!r} is not a valid namespace name",
                            "use at most 63 lower-case letters, digits and '-', e.g. vllm")
        if value == "default":
            raise fix_error("the default namespace mixes vLLM with unrelated workloads",
                            "use a namespace of its own, e.g. vllm")
        if value.startswith("kube-"):  # reserved for the cluster's own (kube-system: the control plane)
            raise fix_error(f"{value!r} is a Kubernetes system namespace (the kube- prefix is reserved)",
                            "use a namespace of its own, e.g. vllm")
        return value

    @field_validator("node_selector")
    @classmethod
    def _node_labels(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return label_pairs(value, "nodeSelector")

    @field_validator("allow_from")
    @classmethod
    def _some_source(cls, value: tuple[AllowFrom, ...] | None) -> tuple[AllowFrom, ...] | None:
        if value == ():
            # an ingress rule without `from` admits every source: never render that by accident
            raise fix_error("an empty allowFrom would admit no client",
                            "list the clients' namespaces, or remove the key for the release's own namespace; "
                            "every pod of the cluster is [{namespaceSelector: {}}]")
        return value

    @field_validator("gpu_resource")
    @classmethod
    def _resource(cls, value: str) -> str:
        if not _RESOURCE_NAME.fullmatch(value) or "/" not in value:
            raise fix_error(f"{value!r} is not an extended resource name",
                            "write it as the device plugin names it, e.g. nvidia.com/gpu")
        return value

    @field_validator("runtime_class_name")
    @classmethod
    def _runtime_class(cls, value: str | None) -> str | None:
        return _dns_name(value, "RuntimeClass")

    @field_validator("multi_node_backend", mode="before")
    @classmethod
    def _no_ray(cls, value: object) -> object:
        if value == "ray":
            raise fix_error("Ray is not supported: it needs a Ray cluster started in every pod before vLLM",
                            "use mp (vLLM's own --nnodes/--node-rank/--headless launcher), or remove the key")
        return value


    @property
    def pods(self) -> int:
        """GPU pods in all: `nodes` per server, `replicas` servers."""
        return self.replicas * self.nodes

    @model_validator(mode="after")
    def _fits_together(self) -> KubernetesSettings:
        if self.pods > 1 and self.weights and self.weights.claim \
                and self.weights.claim.access_mode in ("ReadWriteOnce", "ReadWriteOncePod"):
            raise fix_error(
                f"{self.pods} pods on different GPU nodes cannot share a "
                f"{self.weights.claim.access_mode} weights claim",
                "set kubernetes.weights.claim.accessMode: ReadOnlyMany or ReadWriteMany",
                field="replicas" if self.replicas > 1 else "nodes")
        if self.rdma is not None and self.nodes == 1:
            raise fix_error("RDMA carries NCCL traffic between the nodes of a server, and nodes is 1",
                            "remove kubernetes.rdma, or span nodes with kubernetes.nodes", field="rdma")
        limit, shm = self.resources.memory_limit, self.shm_size
        if limit is not None and shm is not None and shm >= limit:
            raise fix_error("/dev/shm is memory of the pod and would use up the whole memory limit",
                            "raise kubernetes.resources.memoryLimit well above shmSize", field="shmSize")
        return self
