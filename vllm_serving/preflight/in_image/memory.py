"""The `memory` check: each GPU the server takes will have the free memory vLLM asks for at start.

vLLM's worker refuses to start when a GPU's free memory is below utilization x total: v0.10-v0.13
in `Worker.init_device` (vllm/v1/worker/gpu_worker.py, `free_memory < total_memory *
gpu_memory_utilization`), from v0.14 in `request_memory` (vllm/v1/worker/utils.py, `free_memory <
ceil(total_memory * gpu_memory_utilization)`: the same test for a whole number of bytes). It
measures with `torch.cuda.mem_get_info` (`current_platform.mem_get_info`, later
`torch.accelerator.get_memory_info`) after creating its CUDA context, as this check does (one
context per GPU, like one worker per GPU). On integrated GPUs that share system memory (compute
capability 8.7, 11.0 and 12.1: Orin, Thor, Spark) it counts the system's available memory instead
(vllm/utils/mem_utils.py MemorySnapshot.measure). v0.34's extensible KV cache
(`enable_extensible_kv_cache`) skips the comparison: the budget is a cap there.

On Kubernetes the old pod has stopped before the init container runs (Recreate, or maxSurge 0), so
the memory free now is the memory free at start. On Docker the server this preflight gates still
runs, on the same GPUs, until just before the new one starts: its memory is released at cut-over.
NVML gives host PIDs, which a container cannot tie to containers, so where it matters (a GPU short
now) the check prints its readings (READINGS: the GPUs, the processes with their host PIDs, the
utilization) and the Pulumi program, which knows the server being replaced, counts exactly the
memory of that container's processes (Docker's process list of it: components/docker/preflight.py,
`attributed`). The check's own verdict, which stands where the program cannot ask Docker, takes on
each GPU the one process holding the most for that server when it holds at least RELEASED_SHARE of
what the new server asks (a vLLM server holds its whole budget in one worker per GPU; a notebook or
a stray process rarely holds so much).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from typing import Any

from .gpu_processes import GpuProcess, gpu_processes, plain_uuid
from .host import torch_module, used_gpus
from .report import CheckFailed, CheckSkipped, gib

INTEGRATED = ((8, 7), (11, 0), (12, 1))
UTILIZATION_FLAG = "--gpu-memory-utilization"
RELEASED_SHARE = 0.5
READINGS = "memory readings: "


@dataclass(frozen=True)
class GpuMemory:
    index: int
    uuid: str
    free: int
    total: int
    released: tuple[GpuProcess, ...] = ()
    """On Docker, the processes of the server being replaced: their memory is free at start."""

    @property
    def free_at_start(self) -> int:
        return self.free + sum(p.used or 0 for p in self.released)


def requested(total: int, utilization: float) -> int:
    return math.ceil(total * utilization)


def highest_starting(gpus: list[GpuMemory]) -> float:
    """The highest utilization, in hundredths, that every GPU's free memory at start covers."""
    hundredths = math.floor(min(g.free_at_start / g.total for g in gpus) * 100)
    while hundredths > 0 and any(g.free_at_start < requested(g.total, hundredths / 100) for g in gpus):
        hundredths -= 1  # float rounding at the edge
    return hundredths / 100


def _available_system_memory() -> int:
    with open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise OSError("no MemAvailable in /proc/meminfo")


def measure(torch: Any, args: argparse.Namespace) -> list[GpuMemory]:
    gpus = []
    for i in used_gpus(torch, args):
        free, total = torch.cuda.mem_get_info(i)
        if tuple(torch.cuda.get_device_capability(i)) in INTEGRATED:
            free = _available_system_memory()
        uuid = getattr(torch.cuda.get_device_properties(i), "uuid", None)
        gpus.append(GpuMemory(i, plain_uuid(uuid) if uuid is not None else "", int(free), int(total)))
    return gpus


def utilization_asked(args: argparse.Namespace) -> tuple[float, str]:
    """The utilization vLLM will use, and where that comes from."""
    facts = getattr(args, "engine_facts", None) or {}
    if facts.get("gpu_memory_utilization") is not None:
        return float(facts["gpu_memory_utilization"]), "vLLM's engine config"
    argv = list(args.serve_argv or [])
    for i, token in enumerate(argv):
        name, _, value = token.partition("=")
        if name.replace("_", "-") == UTILIZATION_FLAG:
            return float(value or argv[i + 1]), UTILIZATION_FLAG
    if args.default_utilization is not None:
        return args.default_utilization, "vLLM's default for the release"
    raise CheckSkipped("the utilization vLLM will use is unknown (no engine config, no flag, no registry)")


def with_released(gpus: list[GpuMemory], processes: list[GpuProcess], utilization: float,
                  server_pids: frozenset[int] | None = None) -> list[GpuMemory]:
    """Docker: each GPU with the processes of the server being replaced - those with `server_pids`
    (Docker's list of that container's host PIDs), else the largest where it holds at least
    RELEASED_SHARE of what the new server asks."""
    found = []
    for g in gpus:
        mine = [p for p in processes if p.gpu_uuid == g.uuid and p.used]
        if server_pids is not None:
            released = tuple(p for p in mine if p.pid in server_pids)
        else:
            largest = max(mine, key=lambda p: p.used or 0, default=None)
            big = largest is not None and (largest.used or 0) >= RELEASED_SHARE * requested(g.total, utilization)
            released = (largest,) if big and largest is not None else ()
        found.append(GpuMemory(g.index, g.uuid, g.free, g.total, released))
    return found


def readings_line(gpus: list[GpuMemory], processes: list[GpuProcess], utilization: float, source: str) -> str:
    """What the program needs to count the server being replaced exactly, as one line of output."""
    return READINGS + json.dumps({
        "utilization": utilization, "source": source,
        "gpus": [[g.index, g.uuid, g.free, g.total] for g in gpus],
        "processes": [[p.gpu_uuid, p.pid, p.name, p.used] for p in processes]})


def from_readings(line: str) -> tuple[list[GpuMemory], list[GpuProcess], float, str]:
    found = json.loads(line[len(READINGS):])
    return ([GpuMemory(*g) for g in found["gpus"]], [GpuProcess(*p) for p in found["processes"]],
            float(found["utilization"]), str(found["source"]))


def _holders(gpus: list[GpuMemory], processes: list[GpuProcess], exact: bool) -> list[str]:
    by_uuid = {g.uuid: g for g in gpus if g.uuid}
    lines = []
    for p in sorted(processes, key=lambda p: (by_uuid[p.gpu_uuid].index if p.gpu_uuid in by_uuid else -1,
                                              -(p.used or 0))):
        if by_uuid and p.gpu_uuid not in by_uuid:
            continue  # a GPU this server does not take
        gpu = by_uuid.get(p.gpu_uuid)
        used = f"{gib(p.used)} GiB" if p.used is not None else "memory not reported"
        taken = "" if gpu is None or p not in gpu.released else (
            " - the server being replaced's" if exact else " - taken for the server being replaced")
        lines.append(f"held by pid {p.pid} ({p.name or 'not visible from this container'}) on "
                     f"GPU {gpu.index if gpu else p.gpu_uuid}: {used}{taken}")
    return lines or ["held by: no compute process listed"]


def check_memory(args: argparse.Namespace) -> str:
    """Each GPU's free memory at start covers gpuMemoryUtilization x its total, as vLLM demands."""
    torch = torch_module()
    if not torch.cuda.is_available():
        raise CheckFailed("torch sees no CUDA GPU, so its free memory cannot be read")
    utilization, source = utilization_asked(args)
    gpus = measure(torch, args)
    if (getattr(args, "engine_facts", None) or {}).get("extensible_kv_cache"):
        least = min(gpus, key=lambda g: g.free)
        return (f"least free: GPU {least.index} {gib(least.free)}/{gib(least.total)} GiB; vLLM's extensible KV "
                "cache sizes itself from what is free after warm-up (no start-up test)")
    short = [g for g in gpus if g.free < requested(g.total, utilization)]
    processes: list[GpuProcess] = []
    listed: str | None = None
    if short:
        processes, listed = gpu_processes()
        if args.backend == "docker":
            if listed is not None or not all(g.uuid for g in gpus):
                raise CheckSkipped(f"GPU {', '.join(str(g.index) for g in short)} has less than {utilization} x "
                                   "total free, and the memory of the server being replaced cannot be told from "
                                   f"other processes' ({listed or 'torch gives no GPU uuid'})")
            print(readings_line(gpus, processes, utilization, source), flush=True)
    return judge(gpus, processes, utilization, source, listed, replacing=args.backend == "docker")


def judge(gpus: list[GpuMemory], processes: list[GpuProcess], utilization: float, source: str,
          listed: str | None = None, server_pids: frozenset[int] | None = None, replacing: bool = False) -> str:
    """The verdict on the readings: the ok line, or CheckFailed with the GPUs and who holds them.
    `replacing`: a server being replaced releases its memory at start (Docker)."""
    short = [g for g in gpus if g.free < requested(g.total, utilization)]
    if short and replacing:
        gpus = with_released(gpus, processes, utilization, server_pids)
        short = [g for g in gpus if g.free_at_start < requested(g.total, utilization)]
    least = min(gpus, key=lambda g: g.free_at_start - requested(g.total, utilization))
    seen = f"least free at start: GPU {least.index} {gib(least.free_at_start)}/{gib(least.total)} GiB"
    released = [g for g in gpus if g.released]
    if not short:
        replaced = f", once the server being replaced stops on {len(released)}" if released else ""
        return f"{len(gpus)} GPU(s) have {utilization} x total free ({source}){replaced}; {seen}"
    highest = highest_starting(gpus)
    details = [f"GPU {g.index}: {gib(g.free)}/{gib(g.total)} GiB free"
               + (f", {gib(g.free_at_start)} once the server being replaced stops" if g.released else "")
               + f", {gib(requested(g.total, utilization))} GiB needed{' (short)' if g in short else ''}"
               for g in gpus]
    raise CheckFailed(
        f"{len(short)} of {len(gpus)} GPU(s) will have less free memory than {utilization} x total ({source}): "
        f"vLLM would refuse to start; the highest utilization that would start is {highest}",
        [*details, *([f"processes: {listed}"] if listed else _holders(gpus, processes, server_pids is not None))],
        fix=f"stop what holds the memory (nvidia-smi on the host names it), or lower "
            f"vllm-serving:engine.gpuMemoryUtilization to {highest} or less (less room for the KV cache: "
            f"`vllm-stack capacity` shows what that leaves)")
