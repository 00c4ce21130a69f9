"""vLLM judges before cut-over, on a real engine: a server runs; the next stack's preflight runs the
image's own vLLM (the stand-in's fake v0.19.1, tests/preflight/fake_vllm) on the server's exact argv;
what vLLM refuses stops `pulumi up` - the Docker component's check of the preflight's exit code and
output, `components/docker/preflight.py` `_checked` - with vLLM's words, and the running server is
untouched (under Pulumi the new server is never registered: tests/docker/test_preflight.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import msgspec
import pulumi
import pytest
from docker.types import Mount

from components.docker.preflight import Outgoing, _checked
from tests.docker_engine.conftest import Engine, docker_stacks, shipped_spec
from tests.docker_engine.engine import run_preflight
from tests.docker_engine.standin_image import SITE_IN_IMAGE
from tests.stack_builders import make_spec
from vllm_serving.preflight.command import docker_weights_source, preflight_command
from vllm_serving.render.docker_container import ContainerSpec

pytestmark = pytest.mark.docker_engine
URN = "urn:pulumi:v100::vllm-serving::vllm-serving:docker:Preflight$docker:index/container:Container::vllm-preflight"
Argv = tuple[str, ...]


def _replaced(argv: Argv, flag: str, value: str) -> Argv:
    at = argv.index(flag)
    return (*argv[:at + 1], value, *argv[at + 2:])


def _without(argv: Argv, flag: str) -> Argv:
    at = argv.index(flag)
    return (*argv[:at], *argv[at + 2:])


# a stack vLLM refuses, as the next `pulumi up` would bring it: (change of the argv, vLLM's words, the key)
REFUSED: dict[str, tuple[Callable[[Argv], Argv], str, str]] = {
    "argparse choice": (lambda a: (*a, "--kv-cache-dtype", "fp9"),
                        "argparse: argument --kv-cache-dtype: invalid choice: 'fp9'", "engine.kvCacheDtype"),
    "ValueError from the config": (lambda a: _replaced(a, "--max-model-len", "300000"),
                                   "ValueError in ModelConfig: User-specified max_model_len (300000) is greater "
                                   "than the derived max_model_len (max_position_embeddings=262144",
                                   "engine.maxModelLen"),
    "TypeError from the serve arguments": (lambda a: _without(a, "--tool-call-parser"),
                                           "TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser",
                                           "engine.toolCallParser"),
}


def _answers(c: ContainerSpec) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{c.host_port}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def running(engine: Engine) -> ContainerSpec:
    """The v100 stack's server, running and answering."""
    c = engine.adapt(shipped_spec("v100"), "v100-running")
    engine.create(c)
    for _ in range(100):
        if _answers(c):
            return c
        time.sleep(0.3)
    raise AssertionError("the running server never answered")


@pytest.mark.parametrize("refusal", sorted(REFUSED))
def test_what_vllm_refuses_stops_pulumi_up_with_its_words_and_the_server_runs_on(
        engine: Engine, running: ContainerSpec, refusal: str) -> None:
    change, words, key = REFUSED[refusal]
    spec = shipped_spec("v100")
    server = engine.client.containers.get(running.name)
    started_at = server.attrs["State"]["StartedAt"]
    command = preflight_command(spec, "docker", docker_weights_source(spec))
    assert command is not None
    nxt = msgspec.structs.replace(running, command=change(running.command))
    code, output = run_preflight(engine.client, command, nxt, engine.run_id, ("engine",))
    assert code == 1, output
    with pytest.raises(pulumi.RunError) as stopped:
        _checked([engine.image, float(code), output, URN])
    message = str(stopped.value)
    assert message.startswith("preflight failed on the Docker host (exit code 1); the running server was left as it is")
    assert "FAIL  engine  the rules passed this; vLLM v0.19.1 says (" in message and words in message
    fix = next(line for line in message.splitlines() if line.strip().startswith("fix: change "))
    assert f"vllm-serving:{key}" in fix
    assert f"pulumi up --replace '{URN}'" in message
    server.reload()
    assert server.status == "running" and server.attrs["State"]["StartedAt"] == started_at
    assert tuple(server.attrs["Config"]["Cmd"]) == running.command and _answers(running)


@pytest.mark.parametrize("stack", docker_stacks())
def test_vllm_judges_the_servers_argv_byte_for_byte(engine: Engine, tmp_path: Path, stack: str) -> None:
    spec = shipped_spec(stack)
    record = tmp_path / "record"
    record.mkdir()
    c = engine.adapt(spec, f"{stack}-argv")
    # the fake vLLM records what its parser was given; the variable is the server's too, so the
    # preflight's environment stays the server's
    c = msgspec.structs.replace(c, env=(*c.env, ("FAKE_VLLM_ARGV_FILE", "/record/seen.json")))
    server = engine.create(c)
    command = preflight_command(spec, "docker", docker_weights_source(spec))
    assert command is not None
    code, output = run_preflight(engine.client, command, c, engine.run_id, ("engine",),
                                 (Mount("/record", str(record), type="bind"),))
    assert code == 0, output
    seen = json.loads((record / "seen.json").read_text())
    assert seen["argv"] == server.attrs["Config"]["Cmd"] == list(spec.args)
    assert {k: seen["env"].get(k) for k, _ in c.env} == dict(c.env)


def test_a_tag_without_a_registry_is_judged_by_its_own_vllm(engine: Engine, running: ContainerSpec) -> None:
    # a release the project has no registry for: the program finds vLLM's entry points itself
    spec = make_spec("v100", image={"tag": "v0.99.0"})
    command = preflight_command(spec, "docker", docker_weights_source(spec))
    assert command is not None and "--vllm-entry-points" not in command.args
    code, output = run_preflight(engine.client, command, running, engine.run_id, ("engine",))
    assert code == 0 and "ok    engine  vLLM v0.19.1 accepts the argv (parse, validate, api-server, config, " \
                          "attention)" in output, output
    refused = msgspec.structs.replace(running, command=(*running.command, "--kv-cache-dtype", "fp9"))
    code, output = run_preflight(engine.client, command, refused, engine.run_id, ("engine",))
    with pytest.raises(pulumi.RunError) as stopped:
        _checked([engine.image, float(code), output, URN])
    assert "vLLM v0.19.1 says (parsing the argv as `vllm serve`): argparse: argument --kv-cache-dtype: invalid " \
           "choice: 'fp9'" in str(stopped.value)


GIB = 2**30
TOTAL = 32 * GIB
FAKE_GPU = Mount("/fake-gpu", str(Path(__file__).parent / "fake_gpu"), type="bind", read_only=True)


def _with_gpus(c: ContainerSpec, free: list[int], processes: list[dict[str, int]]) -> ContainerSpec:
    """The server as if on GPUs with these readings: the fake torch and pynvml (tests/docker_engine/
    fake_gpu) first on the path, the readings in variables the preflight gets with the server's environment."""
    gpus = [{"free": f, "total": TOTAL, "uuid": f"GPU-4a7f0c2e-0000-4000-8000-00000000000{i}"}
            for i, f in enumerate(free)]
    return msgspec.structs.replace(c, env=(*c.env, ("PYTHONPATH", f"/fake-gpu:{SITE_IN_IMAGE}"),
                                       ("FAKE_GPUS", json.dumps(gpus)), ("FAKE_GPU_PROCESSES", json.dumps(processes))))


def _server_pids(engine: Engine, server: ContainerSpec) -> list[int]:
    """The running server's host PIDs, which NVML would name its GPU processes by."""
    top = engine.client.api.top(server.name)
    return [int(row[top["Titles"].index("PID")]) for row in top["Processes"]]


def test_memory_another_process_holds_stops_pulumi_up_with_the_gpus_and_holders(
        engine: Engine, running: ContainerSpec) -> None:
    spec = shipped_spec("v100")
    utilization = spec.settings.engine.gpu_memory_utilization  # 0.8 of 32 GiB: 25.6 GiB asked per GPU
    assert utilization == 0.8 and spec.settings.engine.gpus_needed == 8
    command = preflight_command(spec, "docker", docker_weights_source(spec))
    assert command is not None
    # GPU 3 has 20 GiB free: a foreign 12 GiB process, too small to be the server being replaced
    free = [31 * GIB] * 3 + [20 * GIB] + [31 * GIB] * 4
    nxt = _with_gpus(running, free, [{"gpu": 3, "pid": 4242, "used": 12 * GIB}])
    code, output = run_preflight(engine.client, command, nxt, engine.run_id, ("engine", "memory"), (FAKE_GPU,))
    assert code == 1, output
    with pytest.raises(pulumi.RunError) as stopped:
        _checked([engine.image, float(code), output, URN], Outgoing(running.name))
    lines = [line.strip() for line in str(stopped.value).splitlines()]
    assert "preflight: FAILED (memory)" in lines and any(line.startswith("ok    engine") for line in lines)
    assert ("FAIL  memory  1 of 8 GPU(s) will have less free memory than 0.8 x total (vLLM's engine config): vLLM "
            "would refuse to start; the highest utilization that would start is 0.62") in lines
    assert "GPU 3: 20.00/32.00 GiB free, 25.60 GiB needed (short)" in lines
    assert "held by pid 4242 (not visible from this container) on GPU 3: 12.00 GiB" in lines
    assert not any(line.startswith("memory readings") for line in lines)
    fix = next(line for line in lines if line.startswith("fix: "))
    assert "vllm-serving:engine.gpuMemoryUtilization to 0.62 or less" in fix
    server = engine.client.containers.get(running.name)
    assert server.status == "running" and _answers(running)


def test_memory_the_server_being_replaced_holds_is_free_at_cut_over(engine: Engine, running: ContainerSpec) -> None:
    spec = shipped_spec("v100")
    command = preflight_command(spec, "docker", docker_weights_source(spec))
    assert command is not None
    # each GPU: the running server's process holds 25.6 GiB (its own 0.8), 6 GiB free now
    pid = _server_pids(engine, running)[0]
    workers = [{"gpu": i, "pid": pid, "used": int(0.8 * TOTAL)} for i in range(8)]
    nxt = _with_gpus(running, [6 * GIB] * 8, workers)
    code, output = run_preflight(engine.client, command, nxt, engine.run_id, ("engine", "memory"), (FAKE_GPU,))
    assert code == 0, output
    assert _checked([engine.image, float(code), output, URN], Outgoing(running.name)) == engine.image


def test_memory_a_foreign_process_as_large_as_the_server_is_not_taken_for_it(
        engine: Engine, running: ContainerSpec) -> None:
    # the container alone would take the 25.6 GiB process for the server being replaced; Docker's
    # list of that server's processes says it is not, so its memory stays held at cut-over
    spec = shipped_spec("v100")
    command = preflight_command(spec, "docker", docker_weights_source(spec))
    assert command is not None
    assert 4242 not in _server_pids(engine, running)
    nxt = _with_gpus(running, [6 * GIB] + [31 * GIB] * 7, [{"gpu": 0, "pid": 4242, "used": int(0.8 * TOTAL)}])
    code, output = run_preflight(engine.client, command, nxt, engine.run_id, ("engine", "memory"), (FAKE_GPU,))
    assert code == 0 and "taken for the server being replaced" not in output, output
    with pytest.raises(pulumi.RunError) as stopped:
        _checked([engine.image, float(code), output, URN], Outgoing(running.name))
    lines = [line.strip() for line in str(stopped.value).splitlines()]
    assert "GPU 0: 6.00/32.00 GiB free, 25.60 GiB needed (short)" in lines
    assert "held by pid 4242 (not visible from this container) on GPU 0: 25.60 GiB" in lines
    assert "preflight: FAILED (memory)" in lines
