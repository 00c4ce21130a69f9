"""`vllm-serving:target`: where the deployment runs."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import field_validator

from vllm_serving.settings.base import Section, fix_error


class TargetSettings(Section):
    """Where the deployment runs."""

    kind: Literal["docker", "kubernetes"] = "docker"
    """Backend: a Docker host (default) or a Kubernetes cluster."""
    docker_host: str | None = None
    """Docker endpoint: `unix:///var/run/docker.sock` (default), `ssh://user@host[:port]` or `tcp://host:port`."""
    ssh_opts: tuple[str, ...] = ()
    """Extra ssh options for an `ssh://` Docker host, e.g. `-o StrictHostKeyChecking=yes`."""

    @field_validator("docker_host")
    @classmethod
    def _docker_host_scheme(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^(unix|ssh|tcp|npipe)://\S+$", value):
            raise fix_error(
                f"'{value}' is not a Docker endpoint",
                "write ssh://user@host (remote) or unix:///var/run/docker.sock (local)",
            )
        return value

    @property
    def docker_hostname(self) -> str | None:
        """The remote host's name for an ssh:// or tcp:// endpoint."""
        if self.docker_host is None:
            return None
        match = re.match(r"^(?:ssh|tcp)://(?:[^@/]+@)?(\[[^\]]+\]|[^:/]+)", self.docker_host)
        return match.group(1) if match else None


