"""The shipped stacks reproduce their seed's `docker run` flag for flag, except the corrections
listed here - the same ones the stack files explain in comments."""

from __future__ import annotations

import json

import pytest

from tests.conftest import shipped_stack
from tests.seed_commands import RunCommand, container_command, seed_command


def _v100(seed: RunCommand) -> None:
    del seed.options["--privileged"]  # the NVIDIA runtime exposes the GPUs without it
    del seed.env["VLLM_USE_V1"]  # removed in vLLM (vllm#28204); v0.19.1 ignores it
    del seed.args["--trust-remote-code"]  # Qwen3.5 is native in vLLM >= 0.17
    seed.options["--gpus"] = "all"  # explicit; the seed relies on the runtime's default
    del seed.options["--shm-size"]  # Docker ignores it with --ipc=host (the host's /dev/shm is used)
    seed.volumes = {(s, d, True) if d.startswith("/data/models") else (s, d, ro)
                    for s, d, ro in seed.volumes}  # weights read-only


def _a100(seed: RunCommand) -> None:
    assert seed.image == "vllm/vllm-openai:latest"
    seed.image = "vllm/vllm-openai:v0.19.1"  # latest pinned
    seed.options["--gpus"] = seed.options["--gpus"].strip("'\"")
    seed.options["--ipc"] = "private"  # Docker's default, spelled out
    seed.volumes = {("/data/models/Qwen3.6-27B-FP8", "/Qwen3.6-27B-FP8", True),  # real path, read-only
                    ("vllm-cache", "/root/.cache/vllm", False)}  # compile cache kept
    seed.args["--attention-backend"] = "FLASHINFER"  # FP8 KV cache on CC 8.0
    seed.args["--max-num-seqs"] = 32.0  # the seed's own tuning (its performance section)
    spec = json.loads(seed.args["--speculative-config"])
    assert spec["method"] == "qwen3_next_mtp"
    spec["method"] = "mtp"  # merged into mtp (vllm#25232)
    seed.args["--speculative-config"] = json.dumps(spec, separators=(",", ":"))


CORRECTIONS = {"v100": _v100, "a100": _a100}


@pytest.mark.parametrize("stack", ["v100", "a100"])
def test_stack_reproduces_its_seed(program, stack: str) -> None:
    run = program(shipped_stack(stack), stack=stack, secrets={"registryPassword": "pw"})
    image_ref = run.one("RemoteImage").inputs["name"]
    ours = container_command(run.one("Container").inputs, image_ref)
    seed = seed_command(stack)
    CORRECTIONS[stack](seed)
    assert ours.options == seed.options
    assert ours.volumes == seed.volumes
    assert ours.env == seed.env
    assert ours.image.endswith(seed.image)
    assert ours.args == seed.args


def test_seed_parser_reads_the_v100_command() -> None:
    seed = seed_command("v100")
    assert seed.options["--shm-size"] == 131072  # 128g in MB
    assert seed.args["--tensor-parallel-size"] == 8.0
    assert seed.env == {"VLLM_USE_MODELSCOPE": "false", "VLLM_USE_V1": "0"}
