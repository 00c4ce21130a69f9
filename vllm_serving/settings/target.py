"""`vllm-serving:target`: where the deployment runs: one Docker host, a fleet of them, or a cluster."""

from __future__ import annotations

import ipaddress
import re
from functools import cached_property
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from vllm_serving.settings.base import Section, fix_error
from vllm_serving.settings.ssh_options import refuse_unlisted
from vllm_serving.settings.text_checks import HOSTNAME, host_name, no_control

_HOST = rf"(?:{HOSTNAME.pattern}|\[[0-9A-Fa-f:.]+\])"
# Whole-value patterns (fullmatch) of the endpoints the Docker provider may use from here.
DOCKER_ENDPOINTS: dict[str, re.Pattern[str]] = {
    "unix": re.compile(r"unix:///[^\s\x00-\x1f\x7f]+"),
    "ssh": re.compile(rf"ssh://(?:[A-Za-z0-9._-]+@)?{_HOST}(?::\d{{1,5}})?"),
    "npipe": re.compile(r"npipe://[^\s\x00-\x1f\x7f]+"),
}
# A fleet host's id names Pulumi resources and output keys: one short DNS-like label.
HOST_ID = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?")
LOCAL_HOST_ID = "local"
"""The id of a host reached through a local socket (unix://, npipe://)."""


def _one_line(option: str) -> str:
    return no_control(option, f"ssh option {option.strip()!r}")


def docker_endpoint(value: str) -> str:
    """`value` when it is a Docker endpoint the provider may use from here (a fleet host's too)."""
    scheme = value.partition("://")[0]
    if scheme == "tcp":
        # The Docker API over tcp:// without TLS gives anyone on the network root on the host;
        # the provider's TLS options are not modelled here, so tcp:// is refused outright.
        raise fix_error(f"{value!r} is the Docker API over plain tcp://: anyone who reaches the "
                        "port controls the host, and the registry password crosses the network in clear",
                        "write ssh://user@host (the daemon stays on its local socket)")
    pattern = DOCKER_ENDPOINTS.get(scheme)
    if pattern is None or pattern.fullmatch(value) is None:
        raise fix_error(
            f"{value!r} is not a Docker endpoint",
            "write ssh://user@host (remote) or unix:///var/run/docker.sock (local)",
        )
    return value


def ssh_hostname(docker_host: str | None) -> str | None:
    """The remote host's name in an ssh:// endpoint; None for a local socket."""
    if docker_host is None:
        return None
    match = re.match(r"^ssh://(?:[^@/]+@)?(\[[^\]]+\]|[^:/]+)", docker_host)
    return match.group(1) if match else None


def derived_host_id(docker_host: str) -> str:
    """A fleet host's default id: the ssh host's first label (`gpu01` of gpu01.example.com), an
    address with '-' for its separators (`10-0-0-5`), or `local` for a local socket."""
    host = ssh_hostname(docker_host)
    if host is None:
        return LOCAL_HOST_ID
    host = host.strip("[]").lower()
    try:
        ipaddress.ip_address(host)
        label = host
    except ValueError:
        label = host.split(".")[0]
    return re.sub(r"[^a-z0-9]+", "-", label).strip("-")[:40].strip("-") or LOCAL_HOST_ID


def _device_ids(value: tuple[int, ...] | None) -> tuple[int, ...] | None:
    if value is not None:
        if not value:
            raise fix_error("an empty device list gives the container no GPU",
                            "list GPU indices such as [0, 1, 2, 3], or remove the key for hardware.deviceIds")
        if len(set(value)) != len(value):
            raise fix_error(f"device ids repeat: {list(value)}", "list each GPU index once")
    return value


class FleetHost(Section):
    """One Docker host of a fleet: the stack's server again, on this host's GPUs, behind its own URL."""

    docker_host: str
    """Docker endpoint of this host: `ssh://user@host[:port]` (a `unix://` socket for the local one)."""
    name: str | None = None
    """Short id in resource names and outputs (lower-case letters, digits, '-'); the ssh host's first label when absent."""  # noqa: E501
    ssh_opts: tuple[Annotated[str, AfterValidator(_one_line)], ...] | None = None
    """ssh options for this host; `target.sshOpts` when absent."""
    device_ids: tuple[Annotated[int, Field(ge=0)], ...] | None = None
    """GPU indices this host's container gets; `hardware.deviceIds` (else every GPU) when absent."""
    public_host: str | None = None
    """Host name in this host's URLs; `network.publicHost`, else the ssh host's name, when absent."""

    @field_validator("docker_host")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        return docker_endpoint(value)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and HOST_ID.fullmatch(value) is None:
            raise fix_error(f"{value!r} is not a host id",
                            "use at most 40 lower-case letters, digits and '-', e.g. gpu01")
        return value

    @field_validator("device_ids")
    @classmethod
    def _ids(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        return _device_ids(value)

    @field_validator("public_host")
    @classmethod
    def _public_host(cls, value: str | None) -> str | None:
        return None if value is None else host_name(value)

    @model_validator(mode="after")
    def _listed_ssh_options(self) -> FleetHost:
        refuse_unlisted(self.ssh_opts, self.docker_host)
        return self

    @cached_property
    def id(self) -> str:
        """The host's id in resource names and outputs: `name`, else derived from dockerHost."""
        return self.name or derived_host_id(self.docker_host)


class TargetSettings(Section):
    """Where the deployment runs."""

    kind: Literal["docker", "kubernetes"] = "docker"
    """Backend: a Docker host (default) or a Kubernetes cluster."""
    docker_host: str | None = None
    """Docker endpoint: `unix:///var/run/docker.sock` (default) or `ssh://user@host[:port]`; `tcp://` is refused."""
    ssh_opts: tuple[Annotated[str, AfterValidator(_one_line)], ...] = ()
    """Extra ssh options for an `ssh://` Docker host, one `-o Keyword=Value` per item from a short list, e.g. `-o StrictHostKeyChecking=yes`."""  # noqa: E501
    hosts: tuple[FleetHost, ...] = ()
    """A Docker fleet: the same server on each of these hosts (one provider and deployment each); one host when empty."""  # noqa: E501

    @field_validator("docker_host")
    @classmethod
    def _docker_host_scheme(cls, value: str | None) -> str | None:
        return None if value is None else docker_endpoint(value)

    @model_validator(mode="after")
    def _listed_ssh_options(self) -> TargetSettings:
        refuse_unlisted(self.ssh_opts, self.docker_host)
        return self

    @property
    def docker_hostname(self) -> str | None:
        """The remote host's name for an ssh:// endpoint."""
        return ssh_hostname(self.docker_host)
