"""`vllm-serving:container` and `vllm-serving:network`: the Docker container and how clients reach it."""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import Field, field_validator

from vllm_serving.engine.defaults import VLLM_PORT
from vllm_serving.settings.base import Seconds, Section, SizeBytes, fix_error
from vllm_serving.settings.text_checks import check_text, host_name
from vllm_serving.units import MIB

# Docker runtime names as daemon.json registers them: nvidia, runsc, io.containerd.runc.v2.
_RUNTIME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class ContainerSettings(Section):
    """The Docker container itself."""

    name: str = Field(default="vllm", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    """Container name (fixed, so a replacement deletes the old container first)."""
    runtime: str | None = None
    """Docker runtime, e.g. `nvidia` when the NVIDIA runtime is not the default."""
    ipc_mode: Literal["host", "private", "shareable"] = "host"
    """IPC namespace; `host` gives NCCL the host's shared memory (vLLM's recommendation)."""
    shm_size: SizeBytes | None = None
    """Size of /dev/shm with a private IPC namespace, Docker notation (`32g` = 32 GiB)."""
    privileged: bool = False
    """Run privileged; the NVIDIA runtime does not need it."""
    restart: Literal["no", "on-failure", "always", "unless-stopped"] = "unless-stopped"
    """Restart policy."""
    startup_timeout: Seconds | None = None
    """How long a model load may take before the container counts as failed; derived from the weights' size when absent."""  # noqa: E501
    stop_grace_period: Seconds = Field(default=60, ge=1, le=3600)
    """How long vLLM may drain on SIGTERM before a replacement or destroy kills it (`docker stop -t`)."""
    log_max_size: str = Field(default="100m", pattern=r"^\d+[kmg]$")
    """Largest json-file log before rotation."""
    log_max_files: int = Field(default=3, ge=1, le=100)
    """Rotated log files kept."""

    @field_validator("runtime")
    @classmethod
    def _runtime(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return check_text(value, _RUNTIME, f"{value!r} is not a Docker runtime name",
                          "write the runtime's name as the Docker daemon registers it, e.g. nvidia")

    @property
    def shm_size_mb(self) -> int | None:
        """shm size in MiB, the unit of the Docker provider's `shm_size`."""
        return None if self.shm_size is None else -(-self.shm_size // MIB)


class NetworkSettings(Section):
    """How clients reach the API."""

    host_port: int = Field(default=VLLM_PORT, ge=1, le=65535)
    """Port on the host (`-p HOSTPORT:8000`)."""
    bind_address: str = "0.0.0.0"
    """Host address the port is published on; 127.0.0.1 keeps the API local."""
    public_host: str | None = None
    """Host name clients use in URLs (no scheme, no port); the ssh host, the bind address or localhost when absent."""
    behind_proxy: bool = False
    """The API is reachable only through a proxy that authenticates every path (vLLM's key covers only /v1)."""

    @field_validator("host_port", mode="before")
    @classmethod
    def _port_alone(cls, value: object) -> object:
        """docker run's -p HOST:CONTAINER (or Compose's "HOST:CONTAINER") pasted whole."""
        if isinstance(value, str) and re.fullmatch(r"(?:[\d.]+:)?\d+:\d+(?:/tcp)?", value.strip()):
            host = value.strip().split(":")[-2]
            raise fix_error(f"{value!r} is a docker run -p mapping, not one port",
                            f"write hostPort: {host} (the host port alone: the container port is always {VLLM_PORT}; "
                            "the address goes in network.bindAddress)")
        return value

    @field_validator("bind_address")
    @classmethod
    def _ip(cls, value: str) -> str:
        try:
            ipaddress.ip_address(value)
        except ValueError as exc:
            raise fix_error(f"{value!r} is not an IP address",
                            "write an address such as 0.0.0.0 (all interfaces) or 127.0.0.1") from exc
        return value

    @field_validator("public_host")
    @classmethod
    def _public_host(cls, value: str | None) -> str | None:
        return None if value is None else host_name(value)


