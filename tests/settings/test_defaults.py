"""The default of every setting a stack leaves out: a changed default changes every user's deployment.

The expected values are written out here from what the project promises, not read from the
settings models: the key's own line in docs (docs/configuration.md, docs/kubernetes.md,
docs/security.md, docs/deploy.md, docs/observability.md) or the reason beside the row. The table
is total: a new key without a row fails `test_every_key_has_its_default_written_here`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from tests.settings.minimal_stack import BASE, parse_minimal
from vllm_serving.settings import StackSettings

GIB = 1024**3
UNSET = None
"""The key is not rendered: vLLM's, Docker's or Kubernetes' own default applies."""

DEFAULTS: dict[str, Any] = {
    # where it runs: one Docker host on its local socket (docs/configuration.md)
    "target.kind": "docker", "target.dockerHost": UNSET, "target.sshOpts": [], "target.hosts": [],
    "hardware.device": "gpu", "hardware.deviceIds": UNSET,  # every GPU of the host
    # Docker Hub's official vLLM image unless a registry is named
    "image.registry": UNSET, "image.repository": "vllm/vllm-openai", "image.digest": UNSET,
    "image.username": UNSET, "image.pullTimeout": UNSET,
    "model.architecture": UNSET, "model.configFile": UNSET, "model.volumeName": UNSET,
    "model.containerPath": UNSET, "model.servedName": UNSET,
    "model.protect": False,  # weights volumes are retained on destroy anyway; protect is opt-in
    # the compile cache is on: a restart without it recompiles for minutes
    "cache.enabled": True, "cache.hostPath": UNSET, "cache.volumeName": UNSET,
    # engine flags: unset flags are not rendered, vLLM's default applies; the two switches are off
    # (trustRemoteCode runs code shipped with the weights; tool choice needs a parser)
    "engine.tensorParallelSize": UNSET, "engine.pipelineParallelSize": UNSET, "engine.dataParallelSize": UNSET,
    "engine.dtype": UNSET, "engine.gpuMemoryUtilization": UNSET, "engine.maxModelLen": UNSET,
    "engine.kvCacheDtype": UNSET, "engine.quantization": UNSET, "engine.enablePrefixCaching": UNSET,
    "engine.attentionBackend": UNSET, "engine.reasoningParser": UNSET, "engine.toolCallParser": UNSET,
    "engine.enableAutoToolChoice": False, "engine.speculativeConfig": UNSET, "engine.maxNumSeqs": UNSET,
    "engine.maxNumBatchedTokens": UNSET, "engine.trustRemoteCode": False, "engine.extraArgs": [],
    "engine.env": {},
    # docs/deploy.md: restarts unless-stopped, bounded json-file logs (100m x 3); ipc host is vLLM's
    # recommendation for NCCL; a 60 s drain on SIGTERM
    "container.name": "vllm", "container.runtime": UNSET, "container.ipcMode": "host", "container.shmSize": UNSET,
    "container.privileged": False, "container.restart": "unless-stopped", "container.startupTimeout": UNSET,
    "container.stopGracePeriod": 60, "container.logMaxSize": "100m", "container.logMaxFiles": 3,
    # vLLM's port 8000 published on every interface (127.0.0.1 keeps it local, by choice)
    "network.hostPort": 8000, "network.bindAddress": "0.0.0.0", "network.publicHost": UNSET,
    "network.behindProxy": False,
    # docs/kubernetes.md and docs/security.md (NetworkPolicy on, GPU taint tolerated, 20Gi cache claim)
    "kubernetes.namespace": "vllm", "kubernetes.createNamespace": True, "kubernetes.replicas": 1,
    "kubernetes.nodes": 1, "kubernetes.multiNodeBackend": "mp", "kubernetes.gpuResource": "nvidia.com/gpu",
    "kubernetes.nodeSelector": UNSET, "kubernetes.runtimeClassName": UNSET, "kubernetes.weights": UNSET,
    "kubernetes.tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "kubernetes.cache.storageClassName": UNSET, "kubernetes.cache.accessMode": "ReadWriteOnce",
    "kubernetes.cache.size": 20 * GIB, "kubernetes.shmSize": UNSET,
    "kubernetes.service.type": "ClusterIP", "kubernetes.service.port": 8000, "kubernetes.service.nodePort": UNSET,
    "kubernetes.networkPolicy": True, "kubernetes.allowFrom": UNSET, "kubernetes.terminationGracePeriodSeconds": 60,
    "kubernetes.imagePullSecrets": [], "kubernetes.resources.cpu": UNSET, "kubernetes.resources.memory": UNSET,
    "kubernetes.resources.memoryLimit": UNSET, "kubernetes.rdma": UNSET,
    "release.promoteFrom": UNSET,  # a stack is its own release unless it says otherwise
    "preflight.enabled": True,  # the new image is checked before it replaces the server
    # docs/configuration.md: ttftP95Seconds default 2.5, scrapeInterval 15s; nothing extra deployed
    "observability.prometheusOperator": False, "observability.grafanaDashboard": False,
    "observability.ttftP95Seconds": 2.5, "observability.scrapeInterval": 15, "observability.labels": {},
    "observability.dashboardNamespace": UNSET,
    "capacity.minConcurrency": UNSET,
    "waivers": [],
}
GIVEN = {f"{section}.{key}" for section, keys in BASE.items() for key in keys} | {"hardware.gpu", "hardware.count"}
"""Keys the minimal stack sets (or that have no default): their value is the stack's."""


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _leaves(model: BaseModel, prefix: str) -> dict[str, Any]:
    """Every key below `model` by its dotted camelCase name; a section that is there by default
    (kubernetes.cache, .service, .resources) is walked into, as its keys are set one by one."""
    out: dict[str, Any] = {}
    for name, field in type(model).model_fields.items():
        key, value = f"{prefix}{field.alias or name}", getattr(model, name)
        if isinstance(value, BaseModel) and not isinstance(value, StackSettings):
            out |= _leaves(value, f"{key}.")
        else:
            out[key] = _plain(value)
    return out


def _defaults_of_a_minimal_stack() -> dict[str, Any]:
    settings = parse_minimal()
    return {k: v for k, v in _leaves(settings, "").items() if k != "secretsSet" and k not in GIVEN}


def test_every_key_has_its_default_written_here() -> None:
    assert set(_defaults_of_a_minimal_stack()) == set(DEFAULTS)


def test_a_stack_that_leaves_a_key_out_gets_the_documented_default() -> None:
    got = _defaults_of_a_minimal_stack()
    assert {k: v for k, v in got.items() if v != DEFAULTS[k]} == {}
