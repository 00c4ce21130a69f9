"""`make demo` (tools/demo.py): the local stack's container with the stand-in image, smoke passing,
in under a minute, and nothing left behind but the image."""

from __future__ import annotations

import time

import docker
import pytest

from tests.paths import PROJECT_DIR
from tools import demo

pytestmark = pytest.mark.docker_engine


def test_make_demo_passes_smoke_in_under_a_minute(engine: object, capsys: pytest.CaptureFixture[str]) -> None:
    name = "vllm-serving-demo-test"
    started = time.monotonic()
    assert demo.main(["--name", name, "--project-dir", str(PROJECT_DIR)]) == 0, capsys.readouterr().out
    assert time.monotonic() - started < 60
    out = capsys.readouterr().out
    assert "smoke local against http://127.0.0.1:" in out and "6/6 passed" in out
    client = docker.from_env()
    try:
        assert not [c for c in client.containers.list(all=True) if c.name.startswith(f"vllm-local-{name}-")]
    finally:
        for image in client.images.list(name=f"{name}-standin"):
            client.images.remove(image.id, force=True)
        client.close()
