"""The preflight program: parse its options, run the checks asked for, print the report.

    python3 -c "$PROGRAM" --backend docker --weights /models/Qwen3.5-27B \\
        --weights-source "the host directory /u02/models/Qwen3.5-27B (vllm-serving:model.hostPath)" \\
        --gpus 8 --capability 7.0 --flag-keys '{"--max-model-len": "vllm-serving:engine.maxModelLen"}' \\
        runtime gpus arch weights engine memory curl -- --model /models/Qwen3.5-27B --max-model-len 8192

The checks to run are its positional arguments, so a host without GPUs can run the others; the
server's argv, byte for byte, follows `--`. One line per check (`ok`, `FAIL` or `skip`, the name,
what was found), the lines detailing a failure and a `fix:` line under it, then `preflight: passed`
or `preflight: FAILED (...)`; exit 1 on failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from . import host
from .engine import CHILD_OPTION, check_engine
from .memory import check_memory
from .report import FAILED, PASSED, CheckFailed, CheckSkipped
from .vllm_calls import child_main

# name -> (check, fix); a fix may name {weights_source}; per-backend fixes as {backend: fix}
Fix = Any
CHECKS: dict[str, tuple[Callable[[argparse.Namespace], str], Fix]] = {
    "runtime": (host.check_runtime, {
        "docker": "install the NVIDIA Container Toolkit on the Docker host and register it with Docker "
                  "(sudo nvidia-ctk runtime configure --runtime=docker, then restart dockerd); if the runtime "
                  "is not Docker's default, set vllm-serving:container.runtime to nvidia",
        "kubernetes": "the node needs the NVIDIA driver, container toolkit and device plugin (or the GPU "
                      "Operator); set vllm-serving:kubernetes.runtimeClassName (e.g. nvidia) where the NVIDIA "
                      "runtime is not the default",
    }),
    "gpus": (host.check_gpus, {
        "docker": "compare nvidia-smi on the host with vllm-serving:hardware.gpu, hardware.count and "
                  "hardware.deviceIds; tensorParallelSize x pipelineParallelSize GPUs must be given to the container",
        "kubernetes": "the node must carry the GPU of vllm-serving:hardware.gpu (kubernetes.nodeSelector) and "
                      "give the pod tensorParallelSize x pipelineParallelSize of them",
    }),
    "arch": (host.check_arch, "pick an image built for this GPU (vllm-serving:image.tag or image.digest): v0.19.1's "
                              "official image still carries sm_70 (Volta); from v0.20 the official CUDA 13 images "
                              "start at sm_75"),
    "weights": (host.check_weights, "put the complete model (config.json, tokenizer files, every *.safetensors "
                                    "shard) into {weights_source}, or point the stack at where it is"),
    "engine": (check_engine, "the image's vLLM could not finish its own checks (its last output is above); a "
                             "slow host may need another run; skip it with vllm-serving:preflight.enabled false"),
    "memory": (check_memory, "stop what holds the GPUs' memory, or lower vllm-serving:engine.gpuMemoryUtilization"),
    "curl": (host.check_curl, "use an image with curl (the official vllm/vllm-openai has it), or build one FROM it "
                              "that installs curl"),
}


def fix_for(name: str, backend: str, weights_source: str) -> str:
    fix = CHECKS[name][1]
    text: str = fix[backend] if isinstance(fix, dict) else fix
    return text.format(weights_source=weights_source)


def split_argv(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """The preflight's own options, and the server's argv after the first `--` (None without one)."""
    if "--" not in argv:
        return argv, None
    at = argv.index("--")
    return argv[:at], argv[at + 1:]


def parse(argv: list[str]) -> argparse.Namespace:
    own, serve_argv = split_argv(argv)
    parser = argparse.ArgumentParser(prog="preflight", description="Checks before vLLM replaces the server.")
    parser.add_argument("checks", nargs="+", choices=sorted(CHECKS), help="the checks to run, in order")
    parser.add_argument("--backend", choices=("docker", "kubernetes"), default="docker")
    parser.add_argument("--weights", default="/models", help="the weights' path in the container")
    parser.add_argument("--weights-source", default="the weights mount", help="where the weights come from")
    parser.add_argument("--gpus", type=int, default=1, help="GPUs the server needs")
    parser.add_argument("--capability", default="", help="the stack GPU's compute capability, e.g. 7.0")
    parser.add_argument("--flag-keys", default="", help="JSON: vLLM flag -> the stack key that sets it")
    parser.add_argument("--vllm-entry-points", default="",
                        help="JSON: where the release's vLLM has each entry point the engine check calls")
    parser.add_argument("--default-utilization", type=float, default=None,
                        help="vLLM's default gpu_memory_utilization for the release")
    args = parser.parse_args(own)
    args.serve_argv = serve_argv
    return args


def run(args: argparse.Namespace) -> tuple[bool, list[str]]:
    """Every requested check, in order: (all passed, the report lines)."""
    width = max(len(name) for name in args.checks)
    lines: list[str] = []
    failed: list[str] = []
    skipped: list[str] = []
    for name in args.checks:
        try:
            lines.append(f"ok    {name:<{width}}  {CHECKS[name][0](args)}")
        except CheckSkipped as exc:
            skipped.append(name)
            lines.append(f"skip  {name:<{width}}  not run: {exc}")
        except CheckFailed as exc:
            failed.append(name)
            lines.append(f"FAIL  {name:<{width}}  {exc}")
            lines.extend(f"      {'':<{width}}  {detail}" for detail in exc.details)
            lines.append(f"      fix: {exc.fix or fix_for(name, args.backend, args.weights_source)}")
        except Exception as exc:  # a check that breaks is a failed check, never a traceback
            failed.append(name)
            lines.append(f"FAIL  {name:<{width}}  the check itself failed: {type(exc).__name__}: {exc}")
    not_run = f", not run: {', '.join(skipped)}" if skipped else ""
    lines.append(f"{FAILED} ({', '.join(failed)})" if failed else f"{PASSED} ({len(args.checks)} checks{not_run})")
    return not failed, lines


def main(argv: list[str]) -> int:
    if argv[:1] == [CHILD_OPTION]:  # the engine check's child process (engine.ask_vllm)
        own, serve_argv = split_argv(argv[2:])
        recorded = json.loads(own[own.index("--vllm-entry-points") + 1]) if "--vllm-entry-points" in own else {}
        return child_main(int(argv[1]), serve_argv or [], recorded)
    ok, lines = run(parse(argv))
    print("\n".join(lines), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":  # `python3 -m` from a checkout; the container runs it through the loader
    sys.exit(main(sys.argv[1:]))
