"""The `engine` check: the image's own vLLM judges the server's exact argv and environment.

The vLLM calls run in a child process (`vllm_calls`): vLLM's imports, logging, CUDA/NVML state and
any subprocess it starts stay out of this process, a crash is reported instead of ending the
preflight, and the time it may take is bounded (ENGINE_SECONDS, inside the preflight's budget).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from typing import Any

from .report import CheckFailed, CheckSkipped
from .stack_keys import keys_for

ENGINE_SECONDS = 300
"""Importing vLLM and torch and building the config take well under a minute; a cold disk, a slow
model inspection subprocess or a first Triton import may take a few. Inside the preflight's
600 s budget (vllm_serving/preflight/command.py TIMEOUT_SECONDS) with the other checks."""
CHILD_OPTION = "--engine-child"
IMAGE_FIX = "use a vLLM image (vllm-serving:image.repository, image.tag)"
TAIL_LINES = 8
STEP_WORDS = {
    "parse": "parsing the argv as `vllm serve`",
    "validate": "validating the serve arguments",
    "api-server": "validating the API server arguments",
    "config": "creating the engine config",
    "attention": "choosing the attention backend",
}


def child_command() -> list[str] | None:
    """How to start this program again: `-m` from a checkout (this module is a file), else the
    container's own `python3 -c PROGRAM` (the loader served this module from memory)."""
    spec = globals().get("__spec__")
    if spec is not None and spec.origin and os.path.isfile(spec.origin):
        return [sys.executable, "-m", spec.name.rsplit(".", 1)[0] + ".main"]
    if sys.argv[:1] == ["-c"] and "-c" in getattr(sys, "orig_argv", []):  # Python 3.10+
        return [sys.executable, "-c", sys.orig_argv[sys.orig_argv.index("-c") + 1]]
    return None


def _tail(output: bytes) -> list[str]:
    lines = [line for line in output.decode(errors="replace").splitlines() if line.strip()]
    return [f"| {line[:300]}" for line in lines[-TAIL_LINES:]]


def ask_vllm(args: argparse.Namespace, seconds: float = ENGINE_SECONDS) -> dict[str, Any]:
    """Run vLLM's steps in a child process and return its result document."""
    command = child_command()
    if command is None:
        raise CheckSkipped("this Python cannot start the check's child process (Python 3.10+ needed)")
    read_end, write_end = os.pipe()
    options = ["--vllm-entry-points", args.vllm_entry_points] if args.vllm_entry_points else []
    child = subprocess.Popen([*command, CHILD_OPTION, str(write_end), *options, "--", *args.serve_argv],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             pass_fds=(write_end,), start_new_session=True)
    os.close(write_end)
    try:
        output, _ = child.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)  # with whatever vLLM started
        output, _ = child.communicate()
        os.close(read_end)
        raise CheckFailed(f"vLLM's own checks did not finish within {seconds:.0f} s", _tail(output)) from None
    with os.fdopen(read_end, encoding="utf-8") as result:
        document = result.read()
    if not document:  # the child writes a result for any Python exception: this is a crash or an exit
        raise CheckFailed(f"vLLM's own checks ended without a result (exit code {child.returncode})",
                          _tail(output))
    try:
        found: dict[str, Any] = json.loads(document)
    except ValueError as exc:  # the check's own fault, never vLLM's verdict
        raise CheckSkipped(f"the check's own error, not vLLM's: its result is not JSON ({exc})") from None
    return found


def check_engine(args: argparse.Namespace) -> str:
    """vLLM's parser, serve-argument validation, engine config and attention backend accept the argv."""
    if args.serve_argv is None:
        raise CheckFailed("no server argv was given to check (expected after `--`)")
    result = ask_vllm(args)
    version = result["version"]
    steps = result["steps"]
    for step in steps:
        if step["status"] == "broken":
            raise CheckFailed(f"vLLM v{version} cannot run `vllm serve` in this image "
                              f"({STEP_WORDS.get(step['name'], step['name'])}): {step['detail']}",
                              fix=IMAGE_FIX + " (the server would stop at the same import)")
        if step["status"] != "refused":
            continue
        if step["name"] == "import":
            raise CheckFailed(f"vLLM cannot be imported in this image: {step['detail']}", fix=IMAGE_FIX)
        keys = keys_for(step["name"], step["detail"], json.loads(args.flag_keys or "{}"), args.serve_argv)
        raise CheckFailed(
            f"the rules passed this; vLLM v{version} says ({STEP_WORDS.get(step['name'], step['name'])}): "
            f"{step['detail']}", fix=_fix(version, keys))
    args.engine_facts = result["facts"]
    facts = result["facts"]
    done = [s["name"] for s in steps if s["status"] == "ok"]
    not_run = [f"{s['name']} ({s['detail']})" for s in steps if s["status"] in ("not-run", "error")]
    if not done:
        raise CheckSkipped(f"vLLM v{version}: no step could run: {'; '.join(not_run)}")
    summary = f"vLLM v{version} accepts the argv ({', '.join(done)})"
    if "max_model_len" in facts:
        summary += (f": max_model_len {facts['max_model_len']}, dtype {facts['dtype']}, "
                    f"kv cache {facts['kv_cache_dtype']}")
    if "attention_backend" in facts:
        summary += f", attention {facts['attention_backend']}"
    return summary + (f"; not run: {'; '.join(not_run)}" if not_run else "")


def _fix(version: str, keys: list[str]) -> str:
    what = ", ".join(keys) if keys else "the stack"
    return (f"change {what} as vLLM v{version}'s words above ask, or pin vllm-serving:image.tag to a release "
            "that accepts it; `vllm-stack check` passed this stack, so report it: the rules should refuse "
            "it at preview")
