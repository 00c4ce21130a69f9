"""What the Docker components refuse from a caller, before anything is registered: weights mounted
writable (hours to copy, never to be overwritten), a compile cache mounted read-only (vLLM writes
it), a secret environment variable without its value."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from components.docker.cache_volume import CacheVolume
from components.docker.model_volume import ModelVolume
from components.docker.vllm_deployment import docker_provider
from components.docker.vllm_server import VllmServer
from tests.conftest import shipped_stack
from tests.pulumi_harness import plain_text, recording_mocks, secret_paths
from tests.stack_builders import make_spec
from vllm_serving.render.docker_container import Mount, container_spec

SENTINEL = "SENTINEL-hm-render-secret-41b7"


def test_weights_are_never_mounted_writable() -> None:
    recording_mocks("v100")
    with pytest.raises(ValueError, match="model weights are always mounted read-only"):
        ModelVolume("weights", Mount("volume", "qwen-weights", "/models/qwen", read_only=False))


def test_the_compile_cache_is_never_mounted_read_only() -> None:
    recording_mocks("v100")
    with pytest.raises(ValueError, match="the compile cache must be writable"):
        CacheVolume("cache", Mount("volume", "vllm-cache", "/root/.cache/vllm", read_only=True))


def test_a_secret_environment_variable_without_its_value_is_named() -> None:
    recording_mocks("v100")
    server = container_spec(make_spec("v100", secrets=("apiKey",)))
    with pytest.raises(ValueError, match=r"secret env without a value: \['VLLM_API_KEY'\]"):
        VllmServer("server", server, "image", [], {})


@pulumi.runtime.test
def test_the_registry_password_is_a_secret_even_when_the_caller_passed_it_plain() -> Any:
    """The password goes into the provider's state (registryAuth); a caller of `docker_provider`
    that read it without `get_secret` must still not write it there in plain text."""
    monitor = recording_mocks("v100")
    spec = make_spec("v100", secrets=("registryPassword",))  # image.username admin at a private registry
    provider = docker_provider("registry", spec, pulumi.Output.from_input(SENTINEL), pulumi.ResourceOptions())

    def check(_: Any) -> None:
        (registered,) = [r for r in monitor.registered if r.type == "pulumi:providers:docker"]
        assert SENTINEL not in plain_text(registered.raw)
        assert list(secret_paths(registered.raw["registryAuth"]))

    return provider.urn.apply(check)


def test_the_server_environment_stays_secret_in_the_state(program: Any) -> None:
    """The API key rides in `envs`: the engine must store the provider's answer for it as a secret,
    whatever the provider returns (Pulumi's additionalSecretOutputs), so `pulumi stack export`
    never shows it."""
    run = program(shipped_stack("v100"), stack="v100", secrets={"apiKey": SENTINEL, "registryPassword": "pw"})
    assert "envs" in run.one("Container").additional_secret_outputs
