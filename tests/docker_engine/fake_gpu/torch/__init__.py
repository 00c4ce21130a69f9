"""A stand-in for torch's CUDA queries in the Docker-engine suite (no GPU here): the preflight's
memory check reads free and total memory per GPU through `torch.cuda.mem_get_info`, as vLLM's worker
does. The readings come from FAKE_GPUS, JSON: [{"free": bytes, "total": bytes, "uuid": "GPU-..."}, ...];
pynvml.py beside it lists the processes holding memory from FAKE_GPU_PROCESSES. Standard library only."""

import json
import os
import types

__version__ = "2.10.0"
_GPUS = json.loads(os.environ.get("FAKE_GPUS", "[]"))


def _properties(i):
    return types.SimpleNamespace(uuid=_GPUS[i]["uuid"].lower().removeprefix("gpu-"), total_memory=_GPUS[i]["total"])


cuda = types.SimpleNamespace(
    is_available=lambda: bool(_GPUS),
    device_count=lambda: len(_GPUS),
    mem_get_info=lambda i: (_GPUS[i]["free"], _GPUS[i]["total"]),
    get_device_capability=lambda i: (7, 0),
    get_device_name=lambda i: "Tesla V100-SXM2-32GB",
    get_device_properties=_properties,
)
