"""The seeds' hand-typed `docker run` commands, parsed into comparable form."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from tests.paths import FIXTURES

SEEDS = FIXTURES / "seeds"
SEED_FILES = {"v100": "000_58edd0417058a508.txt", "a100": "004_6d0deea4506c253c.txt"}

_DOCKER_VALUE_OPTS = {"--name", "--runtime", "--ipc", "--shm-size", "-p", "-v", "-e", "--gpus"}


@dataclass
class RunCommand:
    """Docker options and vLLM flags of one `docker run`, normalised for comparison."""

    options: dict[str, Any] = field(default_factory=dict)
    volumes: set[tuple[str, str, bool]] = field(default_factory=set)
    env: dict[str, str] = field(default_factory=dict)
    image: str = ""
    args: dict[str, Any] = field(default_factory=dict)


def normalise_args(argv: list[str]) -> dict[str, Any]:
    """`--flag value` pairs to {flag: value}; `--kv_cache_dtype` = `--kv-cache-dtype`; numbers as floats."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        flag = "--" + argv[i].removeprefix("--").replace("_", "-")
        value: Any = True
        if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            value = argv[i + 1]
            i += 1
        try:
            value = float(value) if value is not True else value
        except ValueError:
            pass
        out[flag] = value
        i += 1
    return out


def _size_mb(text: str) -> int:
    from vllm_serving.units import parse_size

    return parse_size(text) // (1024 * 1024)


def seed_command(stack: str) -> RunCommand:
    text = (SEEDS / SEED_FILES[stack]).read_text(encoding="utf-8")
    block = re.search(r"docker run -d \\\n(.*?)\n\n", text, re.S)
    assert block, "seed has no docker run block"
    words = shlex.split(block.group(1).replace("\\\n", " "))
    cmd = RunCommand()
    i = 0
    while i < len(words) and words[i].startswith("-"):
        opt, _, inline = words[i].partition("=")
        if opt in _DOCKER_VALUE_OPTS:
            value = inline or words[i + 1]
            i += 0 if inline else 1
            if opt == "-v":
                src, dst, *mode = value.split(":")
                cmd.volumes.add((src, dst, mode == ["ro"]))
            elif opt == "-e":
                k, _, v = value.partition("=")
                cmd.env[k] = v
            elif opt == "--shm-size":
                cmd.options[opt] = _size_mb(value)
            else:
                cmd.options[opt] = value.strip('"')
        else:
            cmd.options[opt] = True
        i += 1
    cmd.image = words[i]
    cmd.args = normalise_args(words[i + 1:])
    spec = re.search(r"--speculative-config '([^']+)'", text)
    if spec:
        cmd.args["--speculative-config"] = spec.group(1)
    return cmd


def container_command(inputs: dict[str, Any], image_ref: str) -> RunCommand:
    """The same form from a captured `docker.Container`'s inputs."""
    cmd = RunCommand()
    cmd.options["--name"] = inputs["name"]
    if inputs.get("runtime"):
        cmd.options["--runtime"] = inputs["runtime"]
    if inputs.get("privileged"):
        cmd.options["--privileged"] = True
    cmd.options["--ipc"] = inputs["ipcMode"]
    if inputs.get("shmSize") is not None:
        cmd.options["--shm-size"] = int(inputs["shmSize"])
    port = inputs["ports"][0]
    cmd.options["-p"] = f"{int(port['external'])}:{int(port['internal'])}"
    if inputs.get("deviceRequests"):  # specific GPUs, as `docker run --gpus '"device=6,7"'` gives them
        cmd.options["--gpus"] = "device=" + ",".join(inputs["deviceRequests"][0]["deviceIds"])
    else:
        cmd.options["--gpus"] = inputs["gpus"]
    for v in inputs["volumes"]:
        cmd.volumes.add((v.get("hostPath") or v["volumeName"], v["containerPath"], bool(v.get("readOnly"))))
    cmd.env = dict(e.split("=", 1) for e in inputs.get("envs", []))
    cmd.image = image_ref
    cmd.args = normalise_args(list(inputs["command"]))
    return cmd
