"""What the preflight runs for a stack: the one `python3 -c` program, the checks, their options, the
release's recorded vLLM entry points, and the server's argv appended exactly."""

from __future__ import annotations

import inspect
import json
import re

import msgspec
import pytest

from tests.paths import DOCS
from tests.preflight.program import run_program
from tests.stack_builders import make_spec
from vllm_serving.engine.flags import FLAGS
from vllm_serving.engine.release_registry import known_versions, release_section
from vllm_serving.preflight.command import (
    CHECKS,
    ENTRY_POINTS_SECTION,
    PROGRAM,
    SOURCES,
    TIMEOUT_SECONDS,
    docker_weights_source,
    flag_keys,
    preflight_command,
)
from vllm_serving.preflight.in_image import main as script
from vllm_serving.preflight.in_image.engine import ENGINE_SECONDS
from vllm_serving.preflight.in_image.vllm_calls import CANDIDATES, attention_arguments


def test_the_command_asks_for_the_stacks_gpus_and_weights() -> None:
    spec = make_spec("v100")
    command = preflight_command(spec, "docker", docker_weights_source(spec))
    assert command is not None and command.entrypoint == ("python3", "-c", PROGRAM)
    args = script.parse(list(command.args))
    assert (args.gpus, args.capability, args.weights) == (8, "7.0", spec.settings.model.mount_path)
    assert args.checks == list(CHECKS["docker"]) == ["runtime", "gpus", "arch", "weights", "engine", "memory", "curl"]
    assert "/u02/models/Qwen3.5-27B (vllm-serving:model.hostPath)" in args.weights_source
    assert args.serve_argv is None and command.env == ()  # the backend appends the server's (for_server)


def test_the_servers_argv_and_environment_are_appended_as_they_are() -> None:
    spec = make_spec("v100")
    command = preflight_command(spec, "docker", "SOURCE")
    assert command is not None
    # an argv whose tokens look like the program's own options and checks stays the server's
    argv = ["--model", "/m", "--gpus", "3", "--", "engine", "--weights=x"]
    args = script.parse(list(command.for_server(argv, (("A", "1"),)).args))
    assert args.serve_argv == argv and args.gpus == 8 and args.weights == spec.settings.model.mount_path
    assert command.for_server(argv, (("A", "1"),)).env == (("A", "1"),)


def test_a_known_release_passes_its_recorded_entry_points_and_default() -> None:
    spec = make_spec("v100")  # image.tag v0.19.1
    command = preflight_command(spec, "docker", "SOURCE")
    assert command is not None
    args = script.parse(list(command.args))
    recorded = release_section("0.19.1", ENTRY_POINTS_SECTION)
    assert json.loads(args.vllm_entry_points) == recorded["calls"]
    assert args.default_utilization == recorded["memory"]["default_gpu_memory_utilization"] == 0.9


def test_a_tag_without_a_registry_leaves_the_program_to_find_them() -> None:
    spec = make_spec("v100", image={"tag": "v0.99.0"})
    command = preflight_command(spec, "docker", "SOURCE")
    assert command is not None and "engine" in command.checks
    args = script.parse(list(command.args))
    assert args.vllm_entry_points == "" and args.default_utilization is None


def test_the_flag_keys_are_the_flag_table_and_extra_args() -> None:
    keys = flag_keys(make_spec("v100", engine={"extraArgs": ["--enforce-eager", "--max-model-len=1"]}))
    assert keys["--max-model-len"] == "vllm-serving:engine.maxModelLen"  # the table wins over extraArgs
    assert keys["--enforce-eager"] == "vllm-serving:engine.extraArgs"
    assert keys["--no-enable-prefix-caching"] == "vllm-serving:engine.enablePrefixCaching"
    assert {f.flag for f in FLAGS} <= set(keys)


def test_an_extra_flag_whose_value_holds_an_equals_sign_is_named_by_its_flag() -> None:
    # vLLM's `--lora-modules name=path` (vllm/entrypoints/openai/cli_args.py LoRAParserAction, "Old
    # format: name=path"): vLLM's refusal names `--lora-modules`, which engine.extraArgs sets
    keys = flag_keys(make_spec("v100", engine={"extraArgs": ["--enable-lora", "--lora-modules=sql=/loras/sql"]}))
    assert keys["--lora-modules"] == keys["--enable-lora"] == "vllm-serving:engine.extraArgs"
    assert not any(flag.startswith("--lora-modules=") for flag in keys)


def test_a_cpu_target_runs_no_gpu_check() -> None:
    spec = make_spec("v100")
    hardware = spec.settings.hardware.model_copy(update={"device": "cpu"})
    cpu = msgspec.structs.replace(spec, settings=spec.settings.model_copy(update={"hardware": hardware}))
    command = preflight_command(cpu, "docker", "SOURCE")
    assert command is not None and command.checks == ("weights", "engine", "curl") and "--gpus" not in command.args


def test_disabled_means_no_command() -> None:
    assert preflight_command(make_spec("v100", preflight={"enabled": False}), "docker", "SOURCE") is None


def test_the_program_is_every_in_image_module_verbatim() -> None:
    assert set(SOURCES) == {"__init__", "report", "host", "engine", "vllm_calls", "stack_keys", "memory",
                            "gpu_processes", "main", "outcomes", "launcher"}
    program: dict[str, object] = {"__name__": "read, not run"}
    exec(PROGRAM, program)
    assert program["SOURCES"] == SOURCES
    done = run_program(["--backend", "docker", "curl"], env={"PATH": "/nonexistent"})
    assert done.returncode == 1 and done.stdout.splitlines()[-1] == "preflight: FAILED (curl)", done.stderr


@pytest.mark.parametrize("version", known_versions())
def test_every_registry_records_entry_points_the_program_can_call(version: str) -> None:
    section = release_section(version, ENTRY_POINTS_SECTION)
    for name, where in section["calls"].items():
        assert where in CANDIDATES[name], f"v{version} {name}: {where} (add it to vllm_calls.CANDIDATES)"
    assert section["memory"]["default_gpu_memory_utilization"] in (0.9, 0.92)
    # every parameter get_attn_backend requires is one the program derives from the engine config
    parameters = section["signatures"]["attention_selector"]
    required = {p for p, kind in parameters.items() if kind == "required"}

    def get_attn_backend(**_: object) -> None: ...

    get_attn_backend.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=inspect.Parameter.empty if kind == "required" else None)
        for p, kind in sorted(parameters.items(), key=lambda item: item[1] != "required")])
    assert required <= set(attention_arguments(get_attn_backend, _FakeConfig()))
    assert "usage_context" in section["signatures"]["create_engine_config"]


class _FakeConfig:
    """The engine config's attributes `attention_arguments` reads."""

    class model_config:  # noqa: N801 - vLLM's attribute name
        dtype = "torch.float16"
        use_mla = False

        @staticmethod
        def get_head_size() -> int:
            return 256

    class cache_config:  # noqa: N801
        cache_dtype = "auto"
        block_size = 16


def test_the_fix_line_names_where_a_docker_host_keeps_the_weights() -> None:
    # a directory on the host (model.hostPath), or a named Docker volume (model.volumeName): the fix
    # line of a failed `weights` check tells the user which one to fill, by its key
    assert docker_weights_source(make_spec("v100")) == (
        "the Docker host's directory /u02/models/Qwen3.5-27B (vllm-serving:model.hostPath)")
    volume = make_spec("v100", model={"hostPath": None, "volumeName": "qwen-weights"})
    assert docker_weights_source(volume) == "the Docker volume qwen-weights (vllm-serving:model.volumeName)"


def test_a_kubernetes_init_container_runs_every_check_but_curl() -> None:
    # the old pod is gone when the init container runs, so memory is checked as it will be at start;
    # Kubernetes probes are httpGet (render/kubernetes), so the image needs no curl
    command = preflight_command(make_spec("a100-k8s"), "kubernetes", "the PVC")
    assert command is not None
    assert command.checks == ("runtime", "gpus", "arch", "weights", "engine", "memory")
    assert script.parse(list(command.args)).checks == list(command.checks)


def test_the_budgets_troubleshooting_tells_of_are_the_preflight_s_own() -> None:
    # docs/troubleshooting.md is what a user reads when the preflight times out: its figures must be
    # the ones the deployment waits (the Docker component's create timeout) and the engine check gets
    text = " ".join((DOCS / "troubleshooting.md").read_text().split())
    said = re.search(r"with a (\d+) s budget .* inside the preflight's (\d+) s", text)
    assert said is not None
    assert (int(said.group(1)), int(said.group(2))) == (ENGINE_SECONDS, TIMEOUT_SECONDS) == (300, 600)
