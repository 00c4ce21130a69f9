"""The preflight container as the real Docker provider runs it, one test per rule that provider imposes.

Source: terraform-provider-docker v4.5.0 (bundled by pulumi-docker v5.1.0 and its successors),
internal/provider/resource_docker_container_funcs.go and resource_docker_container.go; each rule's
function is named in docs/provider-behaviour.md. Mocks accept any input, so each test checks the
input the provider would act on, with the provider's own default where the program leaves one out.
"""

from __future__ import annotations

from typing import Any

import pytest

import tests.pulumi_harness as harness
from tests.conftest import shipped_stack
from tests.pulumi_harness import ProgramFailed, ProgramRun, Registered

PASSWORD = "SENTINEL-registry-pw-0a1b"
STACKS = ["v100", "a100"]
# The provider's schema defaults (resource_docker_container.go), for inputs the program leaves out.
PROVIDER_DEFAULTS: dict[str, Any] = {
    "mustRun": True, "restart": "no", "rm": False, "start": True, "attach": False, "logs": False,
    "wait": False, "tty": False,
}
# Log drivers whose output the engine's logs API returns (Docker docs, "docker logs"; other
# drivers only through the engine's optional dual-logging cache).
READABLE_LOG_DRIVERS = ("json-file", "local", "journald")


def _run(program: Any, stack: str) -> ProgramRun:
    run: ProgramRun = program(shipped_stack(stack), stack=stack, secrets={"registryPassword": PASSWORD})
    return run


def _preflight(run: ProgramRun) -> Registered:
    (preflight,) = run.one_shot()
    return preflight


def _effective(r: Registered, key: str) -> Any:
    """The value the provider acts on: the input, else the provider's default."""
    return r.inputs.get(key, PROVIDER_DEFAULTS[key])


@pytest.mark.parametrize("stack", STACKS)
def test_create_returns_once_the_preflight_exited(program: Any, stack: str) -> None:
    # `attach`: create waits with ContainerWait(not-running) after starting it. `wait` would ask
    # for a healthy state instead, and fail a container without a healthcheck.
    p = _preflight(_run(program, stack))
    assert _effective(p, "attach") is True and _effective(p, "start") is True
    assert _effective(p, "wait") is False and "healthcheck" not in p.inputs


@pytest.mark.parametrize("stack", STACKS)
def test_the_preflight_output_is_captured(program: Any, stack: str) -> None:
    # `logs` follows the container's output through the logs API while create waits; a driver that
    # API cannot read fails the create, and a TTY would skip the stdout/stderr demultiplexing
    p = _preflight(_run(program, stack))
    assert _effective(p, "logs") is True
    assert p.inputs.get("logDriver") in READABLE_LOG_DRIVERS
    assert _effective(p, "tty") is False


@pytest.mark.parametrize("stack", STACKS)
def test_the_exited_preflight_is_never_started_again(program: Any, stack: str) -> None:
    # Read sets must_run false for a stopped container that must run, and the next update starts it
    # again - unattached, its output lost; a restart policy would have dockerd restart it
    p = _preflight(_run(program, stack))
    assert _effective(p, "mustRun") is False
    assert _effective(p, "restart") == "no"


@pytest.mark.parametrize("stack", STACKS)
def test_the_exited_preflight_stays_until_pulumi_removes_it(program: Any, stack: str) -> None:
    # create ends with a Read; a container that removed itself (`rm`) reads as gone, its id cleared
    p = _preflight(_run(program, stack))
    assert _effective(p, "rm") is False


@pytest.mark.parametrize("stack", STACKS)
def test_a_replacement_preflight_never_clashes_with_the_old_one(program: Any, stack: str) -> None:
    # create-first: old and new exist side by side. The bridge auto-names a container without a
    # name, afresh on a replacement; a fixed name or a host port would clash with the old one.
    p = _preflight(_run(program, stack))
    assert p.delete_before_replace_defined and not p.delete_before_replace
    assert "name" not in p.inputs and "ports" not in p.inputs


def test_a_preflight_without_an_exit_code_holds_the_server_back(
        program: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A create that timed out waiting for the exit fails after the container was created: the
    # state keeps it without an exit code, and a later run must not take that for a pass.
    monkeypatch.setattr(harness, "ONE_SHOT_RESULT", (None, ""))
    with pytest.raises(ProgramFailed) as failed:
        _run(program, "v100")
    message = str(failed.value.error)
    assert "no exit code" in message and "pulumi up --replace" in message
    assert not [r for r in failed.value.resources if r.type == "docker:index/container:Container"
                and not r.inputs.get("attach")], "no server registered"
