"""The Docker preflight under Pulumi's mock engine: it runs before the server with the server's own argv,
holds it back when it fails, re-runs for the image, the GPUs, the weights or vLLM's argv and environment
(never for a port or a log option), and goes away with preflight.enabled false."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest

import components.docker.preflight as preflight_component
import tests.pulumi_harness as harness
from tests.conftest import shipped_stack
from tests.contracts.provider_schema import load_docker_schema
from tests.pulumi_harness import ProgramFailed, ProgramRun, Registered
from vllm_serving.preflight.command import CHECKS, PROGRAM
from vllm_serving.preflight.in_image.report import FAILED

P = "vllm-serving:"
PASSWORD = "SENTINEL-registry-pw-5e2b"
API_KEY = "SENTINEL-api-key-for-preflight-0001"
STACKS = ["v100", "a100"]
PULLED_ID = "sha256:" + "cd" * 32  # the mock engine's id of a pulled image
CONTAINER = "docker:index/container:Container"
CONTAINER_INPUTS = load_docker_schema().document["resources"][CONTAINER]["inputProperties"]
FAILED_OUTPUT = "\n".join([
    "ok    runtime  NVIDIA driver 560.28.03, libcuda.so.1 loads",
    "FAIL  weights  /data/models/Qwen3.5-27B is empty",
    "      fix: put the complete model (config.json, tokenizer files, every *.safetensors shard) into ...",
    f"{FAILED} (weights)",
])


def _run(program: Any, stack: str, config: dict[str, Any] | None = None, **secrets: str) -> ProgramRun:
    run: ProgramRun = program(config or shipped_stack(stack), stack=stack,
                              secrets={"registryPassword": PASSWORD, **secrets})
    return run


def _preflight(run: ProgramRun) -> Registered:
    (preflight,) = run.one_shot()
    return preflight


def _urn_of(r: Registered, urns: tuple[str, ...]) -> bool:
    return any(u.endswith(f"{r.type}::{r.name}") for u in urns)


@pytest.mark.parametrize("stack", STACKS)
def test_the_server_waits_for_the_preflight_of_its_own_image_gpus_and_weights(program: Any, stack: str) -> None:
    run = _run(program, stack)
    preflight, server = _preflight(run), run.one("Container")
    assert _urn_of(preflight, server.dependencies), "the server must be registered after the preflight"
    p, s = preflight.inputs, server.inputs
    assert p["image"] == s["image"] == PULLED_ID, "the pulled image the server will run"
    for key in ("gpus", "deviceRequests", "runtime"):
        assert p.get(key) == s.get(key), f"{key}: the preflight must ask for the server's GPUs"
    weights = [v for v in s["volumes"] if v.get("readOnly")]
    assert p["volumes"] == weights and len(weights) == 1, "the weights only, read-only"
    assert p["entrypoints"] == ["python3", "-c", PROGRAM]
    at = p["command"].index("--")
    assert p["command"][at - len(CHECKS["docker"]):at] == list(CHECKS["docker"])
    # runs to completion and reports; holds no port; the server's network (vLLM's config may read the Hub)
    assert (p["attach"], p["logs"], p["mustRun"], p["networkMode"]) == (True, True, False, "bridge")
    assert not {"ports", "name"} & set(p), "auto-named, no port"


@pytest.mark.parametrize("stack", STACKS)
def test_the_engine_check_gets_the_servers_argv_and_environment_exactly(program: Any, stack: str) -> None:
    # an API key too: the server gets it, the preflight does not (no check reads it)
    env = {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1", "VLLM_LOGGING_LEVEL": "INFO"}
    config = _with(shipped_stack(stack), "engine", env=env)
    run = _run(program, stack, config, apiKey=API_KEY)
    p, s = _preflight(run).inputs, run.one("Container").inputs
    assert p["command"][p["command"].index("--") + 1:] == s["command"], "vLLM must judge the server's own argv"
    assert "engine" in p["command"] and "memory" in p["command"]
    plain = [e for e in harness.as_manifest(s["envs"]) if not e.startswith("VLLM_API_KEY=")]
    assert p["envs"] == plain and len(plain) == 2, "the server's plain environment, in its order"
    assert API_KEY not in repr(p)


@pytest.mark.parametrize("stack", STACKS)
def test_the_preflight_is_replaced_create_first(program: Any, stack: str) -> None:
    # the provider replaces containers delete-first, which would delete the dependent server first
    preflight = _preflight(_run(program, stack))
    assert preflight.delete_before_replace_defined and not preflight.delete_before_replace
    assert preflight.custom_timeouts.get("create")


@pytest.mark.parametrize("stack", STACKS)
def test_a_failed_preflight_stops_the_program_before_the_server(
        program: Any, stack: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness, "ONE_SHOT_RESULT", (1, FAILED_OUTPUT))
    with pytest.raises(ProgramFailed) as failed:
        _run(program, stack)
    message = str(failed.value.error)
    assert "FAIL  weights  /data/models/Qwen3.5-27B is empty" in message and "fix: put the complete model" in message
    assert "exit code 1" in message and "left as it is" in message
    assert "pulumi up --replace 'urn:pulumi:" in message and "::" + f"{_preflight_name(stack)}'" in message
    registered = failed.value.resources
    assert [r for r in registered if r.type == CONTAINER and r.inputs.get("attach")], "the preflight ran"
    assert not [r for r in registered if r.type == CONTAINER and not r.inputs.get("attach")], "no server registered"


# The memory check on a host whose two 32 GiB GPUs have 21.9 GiB free each, the outgoing server holding
# 0.5 GiB (pid 100, its API server) and 9.6 GiB (pid 200 on GPU 0, 201 on GPU 1) on each: the container
# cannot tell whose processes they are and refuses 0.9 (0.9 x 32 = 28.8 GiB needed > 21.9 free). Its
# output as in_image/main.py prints it, readings line included.
MEMORY_SHORT = "\n".join([
    "FAIL  memory  2 of 2 GPU(s) will have less free memory than 0.9 x total (--gpu-memory-utilization): "
    "vLLM would refuse to start; the highest utilization that would start is 0.68",
    *(f"              GPU {g}: 21.90/32.00 GiB free, 28.80 GiB needed (short)" for g in (0, 1)),
    *(f"              held by pid {pid} (not visible from this container) on GPU {g}: {size}"
      for g in (0, 1) for pid, size in ((200 + g, "9.60 GiB"), (100, "0.50 GiB"))),
    "      fix: stop what holds the memory (nvidia-smi on the host names it), or lower ...",
    f"{FAILED} (memory)",
    'memory readings: {"utilization": 0.9, "source": "--gpu-memory-utilization", "gpus": ['
    '[0, "4a7f0c2e-0000-4000-8000-000000000000", 23514945945, 34359738368], '
    '[1, "4a7f0c2e-0000-4000-8000-000000000001", 23514945945, 34359738368]], "processes": ['
    '["4a7f0c2e-0000-4000-8000-000000000000", 100, "", 536870912], '
    '["4a7f0c2e-0000-4000-8000-000000000000", 200, "", 10307921510], '
    '["4a7f0c2e-0000-4000-8000-000000000001", 100, "", 536870912], '
    '["4a7f0c2e-0000-4000-8000-000000000001", 201, "", 10307921510]]}',
])


@pytest.mark.parametrize(("pids", "passes"), [
    (frozenset({100, 200, 201}), True),  # 21.9 + 0.5 + 9.6 = 32.0 GiB free at cut-over >= 28.8
    (frozenset({100}), False),  # only the API server's 0.5 GiB: 22.4 < 28.8
    (frozenset(), False),  # no server running: nothing is released
    ("Docker's process list of vllm could not be read (OSError: boom)", False),  # the container's verdict stands
])
def test_the_memory_check_counts_the_outgoing_servers_processes_as_docker_lists_them(
        program: Any, monkeypatch: pytest.MonkeyPatch, pids: frozenset[int] | str, passes: bool) -> None:
    asked: list[tuple[object, ...]] = []

    def docker_top(docker_host: str | None, ssh_opts: tuple[str, ...], name: str) -> frozenset[int] | str:
        asked.append((docker_host, tuple(ssh_opts), name))
        return pids

    monkeypatch.setattr(harness, "ONE_SHOT_RESULT", (1, MEMORY_SHORT))
    monkeypatch.setattr(preflight_component, "server_pids", docker_top)
    # the Docker host the stack deploys to, over ssh with its own options
    config = _with(shipped_stack("v100"), "target", dockerHost="ssh://deploy@gpu-v100-01",
                   sshOpts=["-o", "StrictHostKeyChecking=yes"])
    if passes:
        run = _run(program, "v100", config)
        assert run.one("Container").inputs["image"] == PULLED_ID, "the server follows the passed preflight"
    else:
        with pytest.raises(ProgramFailed, match="FAIL  memory"):
            _run(program, "v100", config)
    # the processes of the server this preflight replaces (container.name), on the stack's own Docker host
    assert asked == [("ssh://deploy@gpu-v100-01", ("-o", "StrictHostKeyChecking=yes"), "vllm-qwen35-27b")]


def _preflight_name(stack: str) -> str:
    return f"{shipped_stack(stack)[P + 'container']['name']}-preflight"


@pytest.mark.parametrize("output", ["", "Traceback (most recent call last):\n  ...\nOSError: boom",
                                    "ok    weights  config.json (X), 1 weight files, 0.0 GiB"])
def test_exit_zero_without_the_verdict_line_is_no_pass(
        program: Any, output: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # e.g. an image whose entrypoint swallowed the script: nothing says the checks ran
    monkeypatch.setattr(harness, "ONE_SHOT_RESULT", (0, output))
    with pytest.raises(ProgramFailed, match="preflight failed"):
        _run(program, "v100")


def _with(config: dict[str, Any], section: str, **values: Any) -> dict[str, Any]:
    changed = copy.deepcopy(config)
    changed.setdefault(P + section, {}).update(values)
    return changed


NOT_TRIGGERS = {
    "hostPort": ("network", {"hostPort": 30999}),
    "restart": ("container", {"restart": "always"}),
    "logs": ("container", {"logMaxSize": "10m", "logMaxFiles": 5}),
    "cache": ("cache", {"enabled": False}),
}
TRIGGERS = {
    "tensor-parallel": ("engine", {"tensorParallelSize": 4}),
    "device-ids": ("hardware", {"deviceIds": [0, 1, 2, 3, 4, 5, 6, 7]}),
    "gpu-model": ("hardware", {"gpu": "A100-80GB"}),
    "runtime": ("container", {"runtime": "nvidia-legacy"}),
    "weights": ("model", {"hostPath": "/srv/models/Qwen3.5-27B"}),
    # what vLLM judges: any change of its argv or environment is checked before cut-over
    "maxModelLen": ("engine", {"maxModelLen": 4096}),
    "prefix-caching": ("engine", {"enablePrefixCaching": False}),
    "servedName": ("model", {"servedName": "another-name"}),
    "env": ("engine", {"env": {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}}),
}


def _replace_forcing(before: dict[str, Any], after: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(changed inputs, those the provider replaces on): a replacement is what re-runs the preflight."""
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    return changed, {k for k in changed if CONTAINER_INPUTS[k].get("willReplaceOnChanges")}


@pytest.mark.parametrize("change", sorted(NOT_TRIGGERS))
def test_other_changes_leave_the_preflight_alone(program: Any, change: str) -> None:
    base = _preflight(_run(program, "v100")).inputs
    section, values = NOT_TRIGGERS[change]
    # an API key too: the preflight gets no secret
    changed = _run(program, "v100", _with(shipped_stack("v100"), section, **values), apiKey=API_KEY)
    assert _preflight(changed).inputs == base


@pytest.mark.parametrize("change", sorted(TRIGGERS))
def test_a_gpu_weights_or_argv_change_reruns_it(program: Any, change: str) -> None:
    base = _preflight(_run(program, "v100")).inputs
    section, values = TRIGGERS[change]
    after = _preflight(_run(program, "v100", _with(shipped_stack("v100"), section, **values))).inputs
    changed, forcing = _replace_forcing(base, after)
    assert changed and forcing == changed, f"{change}: {changed - forcing} would update in place, not re-run"


def test_a_new_image_reruns_it(program: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # the mock engine pulls every reference to one id; give each its own, as a registry would
    new_resource = harness._Mocks.new_resource

    def pulled(self: Any, args: Any) -> tuple[str, dict[str, Any]]:
        rid, outputs = new_resource(self, args)
        if args.typ == "docker:index/remoteImage:RemoteImage":
            outputs["imageId"] = "sha256:" + hashlib.sha256(args.inputs["name"].encode()).hexdigest()
        return rid, outputs

    monkeypatch.setattr(harness._Mocks, "new_resource", pulled)
    base = _run(program, "v100")
    newer = _run(program, "v100", _with(shipped_stack("v100"), "image", digest="sha256:" + "ef" * 32))
    before, after = _preflight(base).inputs, _preflight(newer).inputs
    assert after["image"] == newer.one("Container").inputs["image"] != before["image"]
    assert _replace_forcing(before, after) == ({"image"}, {"image"})


@pytest.mark.parametrize("stack", STACKS)
def test_disabled_leaves_no_preflight(program: Any, stack: str) -> None:
    run = _run(program, stack, _with(shipped_stack(stack), "preflight", enabled=False))
    assert run.one_shot() == []
    assert not [r for r in run.resources if r.type == "vllm-serving:docker:Preflight"]
    server = run.one("Container")
    assert server.inputs["image"] == PULLED_ID
    assert not [u for u in server.dependencies if "preflight" in u]


def test_a_preview_shows_the_servers_own_diff(program: Any) -> None:
    # a preflight still to run has no result in a preview: the server keeps its known image
    run = program(shipped_stack("v100"), stack="v100", secrets={"registryPassword": PASSWORD}, preview=True)
    assert run.one("Container").inputs["image"] == PULLED_ID and len(run.one_shot()) == 1


def test_a_known_failure_fails_the_preview_too(program: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # the last run failed and nothing changed since: the preview says so, with the fix
    monkeypatch.setattr(harness, "ONE_SHOT_RESULT", (1, FAILED_OUTPUT))
    with pytest.raises(ProgramFailed, match="preflight failed on the Docker host"):
        program(shipped_stack("v100"), stack="v100", secrets={"registryPassword": PASSWORD}, preview=True)
