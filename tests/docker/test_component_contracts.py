"""What the Docker components refuse from a caller, before anything is registered: weights mounted
writable (hours to copy, never to be overwritten), a compile cache mounted read-only (vLLM writes
it), a secret environment variable without its value."""

from __future__ import annotations

import pytest

from components.docker.cache_volume import CacheVolume
from components.docker.model_volume import ModelVolume
from components.docker.vllm_server import VllmServer
from tests.pulumi_harness import recording_mocks
from tests.stack_builders import make_spec
from vllm_serving.render.docker_container import Mount, container_spec


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
