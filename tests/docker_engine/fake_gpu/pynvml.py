"""A stand-in for pynvml (the NVML bindings vLLM's images carry): the compute processes on each GPU,
with host PIDs and no names, as NVML reports them to a container (another PID namespace). From
FAKE_GPU_PROCESSES, JSON: [{"gpu": index, "pid": host pid, "used": bytes}, ...]."""

import json
import os
import types

_GPUS = json.loads(os.environ.get("FAKE_GPUS", "[]"))
_PROCESSES = json.loads(os.environ.get("FAKE_GPU_PROCESSES", "[]"))


class NVMLError(Exception):
    pass


def nvmlInit():
    pass


def nvmlShutdown():
    pass


def nvmlDeviceGetCount():
    return len(_GPUS)


def nvmlDeviceGetHandleByIndex(index):
    return index


def nvmlDeviceGetUUID(handle):
    return _GPUS[handle]["uuid"]


def nvmlDeviceGetComputeRunningProcesses(handle):
    return [types.SimpleNamespace(pid=p["pid"], usedGpuMemory=p["used"]) for p in _PROCESSES if p["gpu"] == handle]


def nvmlSystemGetProcessName(pid):
    raise NVMLError("Not Found")  # another PID namespace
