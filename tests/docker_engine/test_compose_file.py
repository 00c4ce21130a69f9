"""`vllm-stack render STACK --format compose` is accepted by Docker Compose itself (`config`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.docker_engine.conftest import docker_stacks
from tests.paths import PROJECT_DIR
from vllm_serving.cli import main

pytestmark = pytest.mark.docker_engine
COMPOSE_TIMEOUT_SECONDS = 60


def _compose_cli() -> list[str] | None:
    """Compose v2 (`docker compose`) when the docker CLI has the plugin, else v1 (`docker-compose`)."""
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True, timeout=30,
                                 check=False).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


@pytest.mark.parametrize("stack", docker_stacks())
def test_the_rendered_compose_file_is_accepted_by_compose(
        stack: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    compose = _compose_cli()
    if compose is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    path = tmp_path / "compose.yaml"
    assert main(["--project-dir", str(PROJECT_DIR), "render", stack, "--format", "compose", "-o", str(path)]) == 0
    capsys.readouterr()
    done = subprocess.run([*compose, "-f", str(path), "config", "-q"], capture_output=True, text=True,
                          timeout=COMPOSE_TIMEOUT_SECONDS, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
