"""Limits at their edge, where an off-by-one lets a stack through that fails only on the host.

- GPU ids count from 0: a host with N GPUs has ids 0..N-1 (nvidia-smi -L), so id N does not exist.
- /dev/shm on Kubernetes is a memory emptyDir counted against the pod's memory limit: shm equal to
  the limit leaves vLLM no memory at all, and the kubelet kills the pod (OOMKilled) once shm fills.
"""

from __future__ import annotations

import pytest

from tests.settings.minimal_stack import parse_minimal
from vllm_serving.findings import ConfigError


def _refused(**sections: object) -> dict[str, str]:
    with pytest.raises(ConfigError) as exc:
        parse_minimal(**sections)
    return {f.key: f"{f.message} | {f.fix}" for f in exc.value.findings}


def test_a_device_id_equal_to_the_gpu_count_does_not_exist() -> None:
    errors = _refused(hardware={"gpu": "A100-80GB", "count": 2, "deviceIds": [1, 2]})
    assert errors == {"vllm-serving:hardware.deviceIds": "device id 2 does not exist on a host with 2 GPUs (ids 0-1) "
                      "| raise hardware.count to the host's GPU count or pick ids below it"}
    assert parse_minimal(hardware={"gpu": "A100-80GB", "count": 2, "deviceIds": [0, 1]}).hardware.gpus_given == 2


@pytest.mark.parametrize(("shm", "limit", "ok"), [("64g", "64g", False), ("65g", "64g", False), ("16g", "64g", True)])
def test_shm_may_not_take_the_whole_memory_limit(shm: str, limit: str, ok: bool) -> None:
    kubernetes = {"shmSize": shm, "resources": {"memoryLimit": limit}}
    if ok:
        assert parse_minimal(kubernetes=kubernetes).kubernetes.shm_size is not None
        return
    errors = _refused(kubernetes=kubernetes)
    assert list(errors) == ["vllm-serving:kubernetes.shmSize"]
    fix = "raise kubernetes.resources.memoryLimit well above shmSize"
    assert errors["vllm-serving:kubernetes.shmSize"].endswith(fix)
