"""Docker Compose itself reads back every `$` value of the rendered file unchanged (`config`),
where an unescaped file would have the shell's variables substituted."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from tests.docker_engine.test_compose_file import COMPOSE_TIMEOUT_SECONDS, _compose_cli
from tests.safety.test_compose_interpolation import HOSTILE, compose_unescaped, hostile_container
from tests.stack_builders import make_spec
from vllm_serving.render.compose_file import compose_document, compose_yaml
from vllm_serving.render.docker_container import container_spec

pytestmark = pytest.mark.docker_engine
PROBE = ("VLLM_SERVING_PROBE", "$")  # tells how this Compose prints a `$` in `config`


def _compose_config(path: Path) -> dict[str, Any]:
    compose = _compose_cli()
    if compose is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed")
    env = {**os.environ, "HOME": "/compose-would-substitute-this", "UNSET": "", "X": "set"}
    done = subprocess.run([*compose, "-f", str(path), "config"], capture_output=True, text=True,
                          timeout=COMPOSE_TIMEOUT_SECONDS, check=False, cwd=path.parent, env=env)
    assert done.returncode == 0, done.stderr
    config: dict[str, Any] = yaml.safe_load(done.stdout)
    return config


def _service(config: dict[str, Any], name: str) -> dict[str, Any]:
    """The service as the container gets it: Compose v1 prints `$` escaped again, v2 as is."""
    service: dict[str, Any] = config["services"][name]
    reescaped = service["environment"][PROBE[0]] == "$$"
    return compose_unescaped(service) if reescaped else service


def test_compose_gives_back_every_dollar_value(tmp_path: Path) -> None:
    c = hostile_container()
    c = msgspec.structs.replace(c, env=(*c.env, PROBE))
    secrets = {"VLLM_API_KEY": "k$y-${HOME}"}
    path = tmp_path / "compose.yaml"
    path.write_text(compose_yaml(c, secrets), encoding="utf-8")
    service = _service(_compose_config(path), c.name)
    assert service["environment"]["VLLM_API_KEY"] == "k$y-${HOME}"
    assert [service["environment"][f"VAR_{i}"] for i in range(len(HOSTILE))] == list(HOSTILE)
    assert service["command"][-len(HOSTILE):] == [f"--override-generation-config={v}" for v in HOSTILE]
    assert service["labels"]["vllm-serving.note"] == "$HOME"


def test_without_escaping_compose_would_substitute(tmp_path: Path) -> None:
    """The control: the same values written unescaped are changed by Compose."""
    c = container_spec(make_spec("a100"))
    c = msgspec.structs.replace(c, env=(("VAR_HOME", "$HOME"),))
    path = tmp_path / "compose.yaml"
    path.write_text(yaml.safe_dump(compose_document(c), sort_keys=False), encoding="utf-8")
    raw = _compose_config(path)["services"][c.name]["environment"]
    assert raw["VAR_HOME"] == "/compose-would-substitute-this"
