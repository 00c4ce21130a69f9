"""A server that never turns healthy: `pulumi up` shows, next to the container, the start period it
waited and the command that shows vLLM's own error (the provider's timeout names neither)."""

from __future__ import annotations

import shlex
from typing import Any

from tests.conftest import shipped_stack

PASSWORD = "SENTINEL-registry-pw-7f3a"


def _run(program: Any, stack: str, config: dict[str, Any] | None = None) -> Any:
    return program(config or shipped_stack(stack), stack=stack, secrets={"registryPassword": PASSWORD})


def test_never_healthy_names_the_container_start_period_and_logs_command(program) -> None:
    run = _run(program, "v100")
    container = run.one("Container").inputs
    hints = [line for line in run.infos if "GET /health" in line]
    assert len(hints) == 1
    hint = hints[0]
    assert f"container {container['name']}" in hint
    assert f"({container['healthcheck']['startPeriod']})" in hint
    assert f"docker logs --tail 200 {container['name']}" in hint
    assert "container.startupTimeout" in hint


def test_never_healthy_hint_is_printed_beside_the_server_container(program) -> None:
    # the provider's "container never became healthy" error shows in the container's row of
    # `pulumi up`; the hint that says what to do stands beside it, not at the top of the output
    run = _run(program, "v100")
    (hint,) = [entry for entry in run.logged if "GET /health" in entry.message]
    server = run.one("Container")
    assert hint.urn.endswith(f"$docker:index/container:Container::{server.name}"), hint.urn


def test_logs_command_targets_the_stacks_docker_host(program) -> None:
    config = shipped_stack("a100")
    config["vllm-serving:target"] = {**config.get("vllm-serving:target", {}), "dockerHost": "ssh://ops@gpu-7"}
    run = _run(program, "a100", config)
    argv = shlex.split(run.outputs["logsCommand"])
    assert argv[:3] == ["docker", "-H", "ssh://ops@gpu-7"]
    assert argv[-1] == run.one("Container").inputs["name"]
    assert any("docker -H ssh://ops@gpu-7 logs" in line for line in run.infos)


def test_local_engine_logs_command_has_no_host_flag(program) -> None:
    run = _run(program, "v100")
    assert "-H" not in shlex.split(run.outputs["logsCommand"])
