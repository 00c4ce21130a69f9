"""A Docker fleet (`target.hosts`): the stack's one spec, expanded into one `ServingSpec` per host.

Each host runs the same server (image, model, argv, mounts, port); only where it runs differs:
its Docker endpoint and ssh options, the GPUs its container gets and the host name in its URLs.
`target.sshOpts`, `hardware.deviceIds` and `network.publicHost` are the defaults of every host
that leaves its own out (`target.dockerHost` names one host, so a fleet refuses it:
rules/fleet.py). A host's spec is the stack's spec with those four keys replaced and no hosts of
its own, so every backend, rule and view that takes one server takes a host as it is.
"""

from __future__ import annotations

import msgspec
from pydantic.alias_generators import to_snake

from vllm_serving.findings import config_key
from vllm_serving.settings.target import FleetHost
from vllm_serving.spec import ServingSpec

DOCKER_DEFAULT_HOST = "unix:///var/run/docker.sock"
"""Where the Docker provider connects when no dockerHost is given."""
# A host's own key -> the single-host key it replaces (and that is its default).
HOST_KEYS: dict[str, str] = {
    "dockerHost": config_key("target", "dockerHost"),
    "sshOpts": config_key("target", "sshOpts"),
    "deviceIds": config_key("hardware", "deviceIds"),
    "publicHost": config_key("network", "publicHost"),
}


class HostSpec(msgspec.Struct, frozen=True):
    """One host of a fleet and the spec of the server on it."""

    index: int
    """Position in `target.hosts` (for config keys; never for resource names)."""
    host: FleetHost
    spec: ServingSpec

    @property
    def id(self) -> str:
        """The host's id: its resources and outputs are keyed by it."""
        return self.host.id

    def key(self, field: str) -> str:
        """`vllm-serving:target.hosts[i].<field>`."""
        return config_key("target", "hosts", self.index, field)

    def sets(self, field: str) -> bool:
        """The host gives `field` (a camelCase key) itself; else the single-host key is its default."""
        return getattr(self.host, to_snake(field)) is not None


def is_fleet(spec: ServingSpec) -> bool:
    """A Docker stack with `target.hosts`: one server per host."""
    target = spec.settings.target
    return target.kind == "docker" and bool(target.hosts)


def host_spec(spec: ServingSpec, index: int, host: FleetHost) -> HostSpec:
    """The fleet's spec as it runs on `host`: its endpoint, ssh options, GPUs and public host."""
    s = spec.settings
    target = s.target.model_copy(update={
        "docker_host": host.docker_host,
        "ssh_opts": s.target.ssh_opts if host.ssh_opts is None else host.ssh_opts,
        "hosts": (),
    })
    hardware = s.hardware if host.device_ids is None else s.hardware.model_copy(
        update={"device_ids": host.device_ids})
    network = s.network if host.public_host is None else s.network.model_copy(
        update={"public_host": host.public_host})
    settings = s.model_copy(update={"target": target, "hardware": hardware, "network": network})
    # argv, env and the startup budget read none of the four keys: they carry over as resolved
    return HostSpec(index, host, msgspec.structs.replace(spec, settings=settings))


def fleet_hosts(spec: ServingSpec) -> tuple[HostSpec, ...]:
    """One `HostSpec` per entry of `target.hosts`, in order; empty for a one-server stack."""
    if not is_fleet(spec):
        return ()
    return tuple(host_spec(spec, i, host) for i, host in enumerate(spec.settings.target.hosts))


def as_one_host(spec: ServingSpec) -> HostSpec:
    """A one-server stack seen as the one host it runs on (its id as a fleet would derive it),
    to compare it host by host with a fleet."""
    return HostSpec(0, FleetHost(docker_host=spec.settings.target.docker_host or DOCKER_DEFAULT_HOST), spec)


def host_resource_name(spec: ServingSpec, host: HostSpec) -> str:
    """The Pulumi name of a host's deployment: the stack's name and the host's id, never its
    position, so adding or removing one host leaves every other host's resources as they are."""
    return f"{spec.name}-{host.id}"
