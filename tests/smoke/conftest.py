"""Fixtures of the smoke tests: the stand-in vLLM server, in-process on an ephemeral loopback port."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.docker_engine.standin.server import ServerConfig, StandinServer, serve

SERVED = "qwen3.5-27b"
MAX_MODEL_LEN = 8192
KEY = "sk-smoke-test-key-0123456789"

StartServer = Callable[..., str]


def full_config(**changes: Any) -> ServerConfig:
    """A stand-in configured like the v100 stack: reasoning parser, auto tool choice, 8192 tokens."""
    values: dict[str, Any] = {"served_names": [SERVED], "model_path": "/data/models/Qwen3.5-27B",
                              "max_model_len": MAX_MODEL_LEN, "reasoning_parser": "qwen3", "auto_tools": True}
    return ServerConfig(**(values | changes))


@pytest.fixture
def start_server() -> Iterator[StartServer]:
    """`start_server(**config changes)` -> the stand-in's base URL (`http://127.0.0.1:PORT/v1`)."""
    servers: list[StandinServer] = []

    def start(**changes: Any) -> str:
        server = serve(full_config(**changes))
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.stop()
