"""The processes holding memory on the GPUs, as the image's NVML sees them: pynvml (a vLLM
dependency), else `nvidia-smi` (the NVIDIA runtime mounts it with the `utility` capability, which
vLLM's images ask for). The driver knows no PID namespaces: every process comes with its host PID
(NVIDIA/nvidia-docker#1483), and its name only where this container can see it."""

from __future__ import annotations

import importlib
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

QUERY = ["--query-compute-apps=gpu_uuid,pid,process_name,used_memory", "--format=csv,noheader,nounits"]
MIB = 2**20


@dataclass(frozen=True)
class GpuProcess:
    gpu_uuid: str
    """Lower case, without NVML's `GPU-` prefix, as torch prints a device's uuid."""
    pid: int
    name: str
    used: int | None
    """Bytes; None where the driver does not say (e.g. under MIG without privileges)."""


def plain_uuid(uuid: object) -> str:
    text = uuid.decode() if isinstance(uuid, bytes) else str(uuid)
    return text.lower().removeprefix("gpu-")


def from_nvidia_smi(output: str) -> list[GpuProcess]:
    """`nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory` CSV (MiB)."""
    found = []
    for line in output.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 4 or not fields[1].isdigit():
            continue
        used = int(fields[-1]) * MIB if fields[-1].isdigit() else None
        found.append(GpuProcess(plain_uuid(fields[0]), int(fields[1]), ", ".join(fields[2:-1]), used))
    return found


def _from_pynvml() -> list[GpuProcess]:
    nvml: Any = importlib.import_module("pynvml")
    nvml.nvmlInit()
    try:
        found = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            uuid = plain_uuid(nvml.nvmlDeviceGetUUID(handle))
            for p in nvml.nvmlDeviceGetComputeRunningProcesses(handle):
                try:
                    name = nvml.nvmlSystemGetProcessName(p.pid)
                except Exception:  # another PID namespace
                    name = ""
                name = name.decode() if isinstance(name, bytes) else str(name)
                found.append(GpuProcess(uuid, int(p.pid), name, p.usedGpuMemory))
        return found
    finally:
        nvml.nvmlShutdown()


def gpu_processes() -> tuple[list[GpuProcess], str | None]:
    """The compute processes on the container's GPUs, or why they cannot be listed."""
    try:
        return _from_pynvml(), None
    except Exception as exc:  # no pynvml, or no NVML: nvidia-smi next
        why = f"{type(exc).__name__}: {exc}"
    smi = shutil.which("nvidia-smi")
    if smi is not None:
        done = subprocess.run([smi, *QUERY], capture_output=True, text=True, timeout=30, check=False)
        if done.returncode == 0:
            return from_nvidia_smi(done.stdout), None
        why += f"; nvidia-smi: {(done.stderr or done.stdout).strip()[:200]}"
    return [], f"neither pynvml nor nvidia-smi could list them ({why})"
