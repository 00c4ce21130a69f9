"""`vllm-serving:kubernetes.rdma`: GPUDirect RDMA between the nodes of a server (`kubernetes.nodes` > 1).

What vLLM's docs ask for (serving/parallelism_scaling.md, "Enabling GPUDirect RDMA"): the
`IPC_LOCK` capability, /dev/shm, and NCCL variables naming the InfiniBand devices; plus what a
cluster's RDMA device plugin and Multus add: a device resource and a secondary network.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from vllm_serving.settings.base import EnvName, Section, fix_error

# An extended resource name (`domain/name`), whole-value pattern applied with fullmatch.
RESOURCE_NAME = re.compile(r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")


class RdmaSettings(Section):
    """GPUDirect RDMA between the nodes of a multi-node group (vLLM's docs: `IPC_LOCK`, NCCL env)."""

    resource: str | None = None
    """Extended resource of the RDMA device, e.g. `rdma/rdma_shared_device_a`; none requested when absent."""
    count: int = Field(default=1, ge=1, le=64)
    """How many of `resource` each pod requests."""
    networks: str | None = Field(default=None, min_length=1)
    """Secondary networks (Multus annotation `k8s.v1.cni.cncf.io/networks`), e.g. `rdma-net`."""
    nccl_env: dict[EnvName, str] = {}
    """NCCL variables for every pod, e.g. {NCCL_IB_HCA: mlx5, NCCL_SOCKET_IFNAME: eth0}."""

    @field_validator("resource")
    @classmethod
    def _resource(cls, value: str | None) -> str | None:
        if value is not None and (not RESOURCE_NAME.fullmatch(value) or "/" not in value):
            raise fix_error(f"'{value}' is not an extended resource name",
                            "write it as the RDMA device plugin names it, e.g. rdma/rdma_shared_device_a")
        return value

    @field_validator("nccl_env")
    @classmethod
    def _nccl_only(cls, value: dict[str, str]) -> dict[str, str]:
        other = sorted(name for name in value if not name.startswith("NCCL_"))
        if other:
            raise fix_error(f"{', '.join(other)} is not an NCCL variable",
                            "keep NCCL_* variables here and put others in engine.env")
        return value
