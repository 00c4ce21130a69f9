"""`render --format docker-run`: the command an operator would type, read back the way Docker's CLI
reads it (an argparse model of `docker run`'s options, written here from Docker's reference, not
from the renderer), against the seed's hand-typed command and Docker's own notations."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

import msgspec
import pytest

from tests.seed_commands import normalise_args
from tests.stack_builders import make_spec
from vllm_serving.render.docker_container import container_spec
from vllm_serving.render.docker_run import docker_run_command, flag_lines, flag_words

# `docker run` options the renderer may print (docs.docker.com/reference/cli/docker/container/run/):
# repeated ones append, `--opt=value` and `--opt value` are the same, and the first word that is
# no option is the image, followed by the container's command.
_REPEATED = ("--security-opt", "-p", "-v", "-e", "--log-opt", "--label")
_SINGLE = ("--name", "--runtime", "--gpus", "--ipc", "--shm-size", "--stop-signal", "--stop-timeout",
           "--restart", "--log-driver", "--health-cmd", "--health-interval", "--health-timeout",
           "--health-start-period", "--health-retries")


def docker_cli() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="docker run", add_help=False, exit_on_error=False, allow_abbrev=False)
    parser.add_argument("-d", action="store_true")
    parser.add_argument("--privileged", action="store_true")
    for option in _REPEATED:
        parser.add_argument(option, action="append", default=[])
    for option in _SINGLE:
        parser.add_argument(option)
    parser.add_argument("image")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    return parser


def typed(stack: str, secrets: tuple[str, ...] = (), revealed: dict[str, str] | None = None,
          **sections: Any) -> argparse.Namespace:
    """The printed command as the shell and then Docker's CLI read it."""
    text = docker_run_command(container_spec(make_spec(stack, secrets, **sections)), revealed)
    words = shlex.split(text.replace("\\\n", " "))
    assert words[:2] == ["docker", "run"]
    return docker_cli().parse_args(words[2:])


def test_v100_is_the_seeds_command_with_its_corrections() -> None:
    """Seed 000's `docker run` (tests/fixtures/seeds), less what tests/test_seeds.py corrects."""
    run = typed("v100")
    assert run.d and run.name == "vllm-qwen35-27b" and run.runtime == "nvidia" and run.ipc == "host"
    assert not run.privileged  # the NVIDIA runtime exposes the GPUs without it
    assert run.gpus == "all"
    assert run.shm_size is None  # Docker ignores --shm-size with --ipc=host
    assert run.p == ["30006:8000"]
    assert run.v == ["/u02/models/Qwen3.5-27B:/data/models/Qwen3.5-27B:ro",  # the weights read-only
                     "/u02/models/data/vllm-cache:/root/.cache/vllm"]
    assert run.e == ["VLLM_USE_MODELSCOPE=false"]  # the seed's VLLM_USE_V1=0 is gone from vLLM
    assert run.image == "192.168.122.156:30000/vllm/vllm-openai:v0.19.1"
    assert normalise_args(run.command) == {
        "--model": "/data/models/Qwen3.5-27B", "--served-model-name": "qwen3.5-27b",
        "--tensor-parallel-size": 8.0, "--gpu-memory-utilization": 0.8, "--max-model-len": 8192.0,
        "--dtype": "half", "--reasoning-parser": "qwen3", "--enable-prefix-caching": True,
        "--enable-auto-tool-choice": True, "--tool-call-parser": "qwen3_coder"}


def test_what_the_command_adds_to_the_seed() -> None:
    run = typed("v100")
    assert run.security_opt == ["no-new-privileges=true", "label=disable"]
    assert (run.stop_signal, run.stop_timeout, run.restart) == ("SIGTERM", "60", "unless-stopped")
    assert run.log_driver == "json-file" and run.log_opt == ["max-file=3", "max-size=100m"]
    # the healthcheck asks vLLM's /health on the container's port (vLLM's default, 8000)
    assert shlex.split(run.health_cmd) == ["curl", "-fsS", "http://localhost:8000/health"]
    # Go's duration text, as Docker reads it back; the start period is the load budget: 21 min for
    # Qwen3.5-27B's 50.99 GiB (300 + 15 x 50.99 = 1065 s, in whole minutes)
    assert (run.health_interval, run.health_timeout, run.health_start_period, run.health_retries) == (
        "30s", "10s", "18m0s", "3")
    assert run.label == ["vllm-serving.model=qwen3.5-27b", "vllm-serving.stack=v100"]


def test_a100_gets_its_gpus_by_index_and_a_private_shm() -> None:
    run = typed("a100")
    # Docker's --gpus value is CSV: without the inner quotes `device=6,7,8,9` splits at the commas
    assert run.gpus == '"device=6,7,8,9"'
    assert run.ipc == "private" and run.shm_size == "32g"
    assert run.runtime is None and run.p == ["8000:8000"]
    assert run.v[1] == "vllm-cache:/root/.cache/vllm"  # a named volume, as Docker names volumes
    spec_json = run.command[run.command.index("--speculative-config") + 1]
    assert spec_json == '{"method":"mtp","num_speculative_tokens":4}'


@pytest.mark.parametrize(("bind", "published"), [
    ("0.0.0.0", "30006:8000"), ("127.0.0.1", "127.0.0.1:30006:8000"), ("::1", "[::1]:30006:8000")])
def test_the_port_is_published_on_the_bind_address(bind: str, published: str) -> None:
    # an IPv6 address in brackets, or Docker splits it at its colons
    assert typed("v100", network={"bindAddress": bind}).p == [published]


def test_a_cpu_stack_asks_for_no_gpu() -> None:
    run = typed("local")
    assert run.gpus is None and run.runtime is None


def test_secrets_are_masked_unless_revealed() -> None:
    assert typed("v100", ("apiKey",)).e == ["VLLM_USE_MODELSCOPE=false", "VLLM_API_KEY=********"]
    revealed = typed("v100", ("apiKey",), {"VLLM_API_KEY": "sk-1 $(x)"})
    assert revealed.e == ["VLLM_USE_MODELSCOPE=false", "VLLM_API_KEY=sk-1 $(x)"]  # as given, quoted once
    assert typed("v100", ("apiKey",), {"HF_TOKEN": "hf-1"}).e[-1] == "VLLM_API_KEY=********"


def test_each_flag_sits_with_its_value_on_one_line() -> None:
    command = ("--model", "/m", "--enforce-eager", "--max-num-seqs", "8", "--speculative-config", "--x",
               "serve", "--trust-remote-code")
    assert flag_words(command) == [("--model", "/m"), ("--enforce-eager",), ("--max-num-seqs", "8"),
                                   ("--speculative-config", "--x"), ("serve",), ("--trust-remote-code",)]
    assert flag_lines(("--chat-template", "a b", "--x")) == ["--chat-template 'a b'", "--x"]
    assert flag_words(("--enforce-eager", "--max-model-len", "8192")) == [
        ("--enforce-eager",), ("--max-model-len", "8192")]  # the last flag keeps its value too


def test_privileged_and_runtime_only_when_set() -> None:
    c = msgspec.structs.replace(container_spec(make_spec("a100")), privileged=True, runtime="runsc")
    words = shlex.split(docker_run_command(c).replace("\\\n", " "))
    run = docker_cli().parse_args(words[2:])
    assert run.privileged and run.runtime == "runsc"
