"""Each shipped Docker stack's own container spec on a real engine, with a stand-in vLLM image.

Only the GPU request is removed and host resources redirected (see `engine.on_this_engine`); the
healthcheck, ports, mounts, log options, restart policy and vLLM argv are the project's.
"""

from __future__ import annotations

import time

import httpx
import msgspec
import pytest
from docker.models.containers import Container

from tests.docker_engine.conftest import Deployment, Engine, docker_stacks, shipped_spec
from tests.docker_engine.engine import exec_python, health_wait_seconds, wait_healthy
from tests.paths import PROJECT_DIR, stack_file
from tests.smoke.verb import smoke_verb
from vllm_serving.render.docker_container import ContainerSpec
from vllm_serving.settings import VLLM_CACHE_PATH
from vllm_serving.spec import resolve

pytestmark = pytest.mark.docker_engine
STACKS = docker_stacks()
ANSWER_WAIT_SECONDS = 60  # the stand-in starts in a second; the margin is for a loaded machine


def _published(container: Container) -> dict[str, list[tuple[str, str]]]:
    ports = container.attrs["NetworkSettings"]["Ports"] or {}
    return {port: sorted((b["HostIp"], b["HostPort"]) for b in bindings or []) for port, bindings in ports.items()}


def _expected_bindings(c: ContainerSpec) -> list[tuple[str, str]]:
    # Docker publishes the unspecified address on both families when IPv6 is on
    hosts = ["0.0.0.0", "::"] if c.bind_address == "0.0.0.0" else [c.bind_address]
    return [(h, str(c.host_port)) for h in hosts]


def _base_url(c: ContainerSpec) -> str:
    return f"http://127.0.0.1:{c.host_port}/v1"


def _wait_answering(c: ContainerSpec) -> None:
    """The stand-in answers /health a moment after it starts (vLLM would take minutes)."""
    deadline = time.monotonic() + ANSWER_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{c.host_port}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{c.name} did not answer /health within {ANSWER_WAIT_SECONDS}s")


@pytest.mark.parametrize("stack", STACKS)
def test_turns_healthy_through_the_projects_healthcheck(deployments: dict[str, Deployment], stack: str) -> None:
    d = deployments[stack]
    assert wait_healthy(d.api_container, health_wait_seconds(d.api)) == "healthy", d.api_container.logs()[-2000:]
    assert d.api_container.attrs["Config"]["Healthcheck"]["Test"] == list(d.api.healthcheck.tests)


@pytest.mark.parametrize("stack", STACKS)
def test_the_port_is_published_on_the_bind_address_only(deployments: dict[str, Deployment], stack: str) -> None:
    d = deployments[stack]
    published = _published(d.api_container)
    assert list(published) == [f"{d.api.container_port}/tcp"]
    assert set(published[f"{d.api.container_port}/tcp"]) <= set(_expected_bindings(d.api))
    assert (d.api.bind_address, str(d.api.host_port)) in published[f"{d.api.container_port}/tcp"]


@pytest.mark.parametrize("stack", STACKS)
def test_the_weights_mount_is_read_only(deployments: dict[str, Deployment], stack: str) -> None:
    d = deployments[stack]
    weights = d.api.model_mount
    code, output = exec_python(d.api_container, f"open({weights.target + '/written-by-vllm'!r}, 'w')")
    assert code != 0 and "Read-only file system" in output
    code, output = exec_python(d.api_container, f"print(open({weights.target + '/config.json'!r}).read())")
    assert code == 0 and "architectures" in output  # mounted, and readable


@pytest.mark.parametrize("stack", STACKS)
def test_log_rotation_options_are_applied(deployments: dict[str, Deployment], stack: str) -> None:
    d = deployments[stack]
    assert d.api_container.attrs["HostConfig"]["LogConfig"] == {"Type": "json-file", "Config": dict(d.api.log_opts)}
    assert set(dict(d.api.log_opts)) == {"max-file", "max-size"}


@pytest.mark.parametrize("stack", STACKS)
def test_smoke_passes_once_healthy(deployments: dict[str, Deployment], stack: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    d = deployments[stack]
    assert wait_healthy(d.api_container, health_wait_seconds(d.api)) == "healthy"
    code = smoke_verb(PROJECT_DIR, stack, "--base-url", _base_url(d.api), "--timeout", "10")
    out = capsys.readouterr().out
    assert code == 0, out
    assert " FAIL " not in out


@pytest.mark.parametrize("stack", STACKS)
def test_smoke_fails_against_a_server_with_the_wrong_model_name(
        engine: Engine, stack: str, capsys: pytest.CaptureFixture[str]) -> None:
    spec = shipped_spec(stack)
    c = engine.adapt(spec, f"{stack}-wrong-name")
    engine.create(msgspec.structs.replace(c, command=(*c.command, "--served-model-name", "not-the-stacks-model")))
    _wait_answering(c)
    code = smoke_verb(PROJECT_DIR, stack, "--base-url", _base_url(c), "--timeout", "10")
    out = capsys.readouterr().out
    assert code == 1
    models = next(line for line in out.splitlines() if line.split()[:1] == ["models"])
    assert "FAIL" in models and "not-the-stacks-model" in models and spec.served_model_name in models


@pytest.mark.parametrize("stack", STACKS)
def test_the_compile_cache_survives_a_replacement(engine: Engine, stack: str) -> None:
    c = engine.adapt(shipped_spec(stack), f"{stack}-replace")
    assert c.cache_mount is not None and c.cache_mount.target == VLLM_CACHE_PATH
    marker = f"{VLLM_CACHE_PATH}/torch_compile_cache/marker"
    first = engine.create(c)
    code, output = exec_python(first, f"import os; os.makedirs(os.path.dirname({marker!r}), exist_ok=True); "
                                      f"open({marker!r}, 'w').write('compiled')")
    assert code == 0, output
    first.remove(force=True, v=True)  # as Pulumi's delete-before-replace removes it, volumes included
    second = engine.create(c)
    assert exec_python(second, f"print(open({marker!r}).read())") == (0, "compiled\n")


@pytest.mark.parametrize("stack", STACKS)
def test_the_rendered_docker_run_runs_as_rendered(deployments: dict[str, Deployment], stack: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    d = deployments[stack]
    container = d.run_container
    assert wait_healthy(container, health_wait_seconds(d.run)) == "healthy", container.logs()[-2000:]
    assert container.attrs["HostConfig"]["LogConfig"] == {"Type": "json-file", "Config": dict(d.run.log_opts)}
    assert set(_published(container)[f"{d.run.container_port}/tcp"]) <= set(_expected_bindings(d.run))
    mounts = {m["Destination"]: m["RW"] for m in container.attrs["Mounts"]}
    assert mounts == {m.target: not m.read_only for m in d.run.mounts}
    code = smoke_verb(PROJECT_DIR, stack, "--base-url", _base_url(d.run), "--timeout", "10")
    assert code == 0, capsys.readouterr().out


def test_a_loopback_bind_address_publishes_on_loopback_only(engine: Engine) -> None:
    spec = shipped_spec("v100")
    network = spec.settings.network.model_copy(update={"bind_address": "127.0.0.1"})
    local = msgspec.structs.replace(spec, settings=spec.settings.model_copy(update={"network": network}))
    c = engine.adapt(local, "v100-loopback")
    container = engine.create(c)
    _wait_answering(c)
    container.reload()
    assert _published(container) == {f"{c.container_port}/tcp": [("127.0.0.1", str(c.host_port))]}


def test_an_api_key_stack_refuses_requests_without_the_key(
        engine: Engine, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = shipped_spec("v100-staging")
    spec = resolve(shipped.settings.model_copy(update={"secrets_set": frozenset({"apiKey"})}), "v100-staging")
    c = engine.adapt(spec, "v100-staging-key")
    assert c.secret_env == ("VLLM_API_KEY",)
    engine.create(c)
    _wait_answering(c)
    stack_dir = engine.tmp / f"project-{engine.run_id}"
    stack_dir.mkdir()
    (stack_dir / "Pulumi.yaml").write_text((PROJECT_DIR / "Pulumi.yaml").read_text())
    (stack_dir / "Pulumi.v100-staging.yaml").write_text(
        (stack_file("v100-staging")).read_text()
        + "  vllm-serving:apiKey:\n    secure: AAABAG5vdC1hLW5vbmNlIW5vdC1hLXJlYWwtdGFnISFrZXk=\n")
    monkeypatch.setenv("VLLM_SERVING_SECRET_APIKEY", engine.secret_values(c)["VLLM_API_KEY"])
    assert smoke_verb(stack_dir, "v100-staging", "--base-url", _base_url(c), "--timeout", "10") == 0
    monkeypatch.delenv("VLLM_SERVING_SECRET_APIKEY")
    assert smoke_verb(stack_dir, "v100-staging", "--base-url", _base_url(c), "--timeout", "10") == 1
    out = capsys.readouterr().out
    assert engine.secret_values(c)["VLLM_API_KEY"] not in out
    api_key_row = [line for line in out.splitlines() if line.split()[:1] == ["api-key"]][-1]
    assert "FAIL" in api_key_row and "VLLM_SERVING_SECRET_APIKEY" in api_key_row
