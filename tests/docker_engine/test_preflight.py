"""The preflight program in a real container: the stand-in image, each shipped Docker stack's own arguments
and argv, its weights mounted read-only at the stack's path, on the default bridge network - as
`components/docker/preflight.py` runs it (`engine.run_preflight`).

The stand-in has no GPU and the engine no NVIDIA runtime, so the GPU checks (gpus, arch, memory) are left
out; the runtime check runs, and must fail here exactly as it would on a host without the toolkit.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from tests.docker_engine.conftest import Engine, docker_stacks, shipped_spec
from tests.docker_engine.engine import MODEL_CONFIG, run_preflight
from vllm_serving.preflight.command import GPU_CHECKS, docker_weights_source, preflight_command
from vllm_serving.preflight.verdict import failure_message, read_verdict
from vllm_serving.render.docker_container import Mount, container_spec

pytestmark = pytest.mark.docker_engine
STACKS = docker_stacks()
NO_GPU_CHECKS = ("weights", "engine", "curl")


def _preflight(engine: Engine, stack: str, weights: Path, checks: tuple[str, ...] = ("weights", "curl")
               ) -> tuple[int, str]:
    """Run the stack's preflight with `checks` and `weights` as its weights: exit code and output."""
    spec = shipped_spec(stack)
    command = preflight_command(spec, "docker", docker_weights_source(spec))
    assert command is not None
    assert set(command.checks) - GPU_CHECKS == set(NO_GPU_CHECKS)
    server = container_spec(spec, image=engine.image)
    server = msgspec.structs.replace(server, mounts=(Mount("bind", str(weights), server.model_mount.target, True),))
    return run_preflight(engine.client, command, server, engine.run_id, checks)


@pytest.mark.parametrize("stack", STACKS)
def test_an_empty_weights_dir_fails_with_the_config_json_message(engine: Engine, tmp_path: Path, stack: str) -> None:
    # what Docker leaves when the stack's hostPath does not exist on the host: an empty directory
    code, output = _preflight(engine, stack, tmp_path)
    assert code == 1, output
    verdict = read_verdict(code, output)
    assert not verdict.passed
    fail = next(line for line in verdict.report if line.startswith("FAIL  weights"))
    assert "is empty" in fail and "bind-mount source" in fail
    source = docker_weights_source(shipped_spec(stack))
    assert any(line.strip().startswith("fix: ") and source in line for line in verdict.report)
    assert verdict.report[-1] == "preflight: FAILED (weights)"
    assert "curl" in " ".join(verdict.report)  # the other checks still ran
    assert "FAIL  weights" in failure_message("on the Docker host", verdict, code, "pulumi up --replace 'URN'")


@pytest.mark.parametrize("stack", STACKS)
def test_a_weights_dir_without_config_json_fails(engine: Engine, tmp_path: Path, stack: str) -> None:
    (tmp_path / "model-00001-of-00001.safetensors").write_bytes(b"\0" * 64)
    code, output = _preflight(engine, stack, tmp_path)
    assert code == 1 and "has no config.json" in output, output


@pytest.mark.parametrize("stack", STACKS)
def test_a_model_passes(engine: Engine, tmp_path: Path, stack: str) -> None:
    (tmp_path / "config.json").write_text(MODEL_CONFIG)
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 1024)
    code, output = _preflight(engine, stack, tmp_path, NO_GPU_CHECKS)
    assert code == 0, output
    assert read_verdict(code, output).passed
    assert output.splitlines()[-1] == "preflight: passed (3 checks)"
    assert "ok    engine   vLLM v0.19.1 accepts the argv" in output


def test_without_the_nvidia_runtime_the_runtime_check_fails(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["X"]}))
    (tmp_path / "model.safetensors").write_bytes(b"\0")
    code, output = _preflight(engine, STACKS[0], tmp_path, ("runtime", "weights", "curl"))
    assert code == 1, output
    assert output.splitlines()[0].startswith("FAIL  runtime  no /dev/nvidiactl")
    assert "nvidia-ctk runtime configure" in output and "preflight: FAILED (runtime)" in output
