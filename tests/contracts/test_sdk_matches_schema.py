"""The installed pulumi-docker SDK sends exactly the inputs the vendored schema describes.

The contract tests are only as good as the schema: if an SDK upgrade adds or drops an input, the
vendored schema (and its overlay) must be replaced with the new version's, or the contract would
check the program against a provider it no longer talks to.
"""

from __future__ import annotations

import importlib.metadata
import inspect
from collections.abc import Iterator
from typing import Any

import pulumi
import pulumi_docker as docker
import pytest

from tests.contracts.provider_schema import DOCKER_SDK_VERSION, load_docker_schema
from tests.pulumi_harness import recording_mocks

SCHEMA = load_docker_schema()
# Every Docker resource type the program registers, with its SDK class and args class.
RESOURCES: dict[str, tuple[Any, Any]] = {
    "docker:index/container:Container": (docker.Container, docker.ContainerArgs),
    "docker:index/remoteImage:RemoteImage": (docker.RemoteImage, docker.RemoteImageArgs),
    "docker:index/volume:Volume": (docker.Volume, docker.VolumeArgs),
    "pulumi:providers:docker": (docker.Provider, docker.ProviderArgs),
}
# Mocks serialise any value without looking at its type; only the property names matter here.
PROBE_VALUE = "probe"
PROBE_TYPE = "contracts:index:TypeProbe"


def _every_input(args_class: Any) -> dict[str, str]:
    """One value for every parameter the SDK's args class accepts (snake_case)."""
    _self, *names = inspect.signature(args_class.__init__).parameters  # the SDK calls self `__self__`
    return dict.fromkeys(names, PROBE_VALUE)


def _sdk_class(type_token: str) -> Any:
    """`docker:index/ContainerHealthcheck:ContainerHealthcheck` -> `docker.ContainerHealthcheckArgs`."""
    return getattr(docker, f"{type_token.rsplit(':', 1)[-1]}Args")


def _schema_types() -> list[str]:
    found: set[str] = set()
    for token in RESOURCES:
        found |= SCHEMA.referenced_types(token)
    return sorted(found)


@pytest.fixture
def monitor() -> Iterator[Any]:
    """Mocks for one test (they are process-global, so never at module level)."""
    yield recording_mocks("sdk-probe")


def test_installed_sdk_is_the_version_the_schema_describes() -> None:
    assert importlib.metadata.version("pulumi-docker") == DOCKER_SDK_VERSION, (
        "pulumi-docker changed: vendor its schema into tests/contracts/schemas/ (see README.md)")


def test_schema_reaches_the_nested_types_the_program_uses() -> None:
    # guards the type walk below: without it the nested comparison could check nothing
    assert {"docker:index/ContainerHealthcheck:ContainerHealthcheck",
            "docker:index/ContainerDeviceRequest:ContainerDeviceRequest",
            "docker:index/ProviderRegistryAuth:ProviderRegistryAuth"} <= set(_schema_types())


@pulumi.runtime.test
def test_sdk_inputs_are_the_schema_inputs(monitor: Any) -> Any:
    """Each resource and nested type, every SDK parameter set: the names the engine receives."""
    probes = [cls(f"probe-{i}", **_every_input(args)) for i, (cls, args) in enumerate(RESOURCES.values())]
    for type_token in _schema_types():
        nested = _sdk_class(type_token)(**_every_input(_sdk_class(type_token)))
        probes.append(pulumi.CustomResource(PROBE_TYPE, type_token, {"value": nested}))

    def check(_: Any) -> None:
        sent = {r.name: r.inputs for r in monitor.registered}
        mismatches = []
        for i, token in enumerate(RESOURCES):
            accepted = set(SCHEMA.resource(token).properties)
            mismatches += _differences(token, set(sent[f"probe-{i}"]), accepted)
        for type_token in _schema_types():
            accepted = set(SCHEMA.types[type_token].get("properties", {}))
            mismatches += _differences(type_token, set(sent[type_token]["value"]), accepted)
        assert not mismatches, "\n".join(mismatches)

    return pulumi.Output.all(*[p.urn for p in probes]).apply(check)


def _differences(token: str, sdk: set[str], schema: set[str]) -> list[str]:
    out = [f"{token}: the SDK sends '{n}', the schema has no such input" for n in sorted(sdk - schema)]
    out += [f"{token}: the schema has '{n}', the SDK no longer sends it" for n in sorted(schema - sdk)]
    return out
