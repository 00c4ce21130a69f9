"""How vLLM's CPU backend sizes its KV cache: from one setting, not from device memory.

vLLM v0.19.1 (paths under `vllm/` of the wheel):
- `platforms/cpu.py` `CpuPlatform.get_device_total_memory`: VLLM_CPU_KVCACHE_SPACE GiB, read as
  a whole number (`envs.py`: `int(os.getenv(...))`); unset, half the host's memory per NUMA node;
- `v1/worker/cpu_worker.py` `CPUWorker.determine_available_memory` returns exactly that, so no
  weights, activations or CUDA graphs are subtracted;
- `CpuPlatform.check_and_update_config` sets the block size to 128 unless `--block-size` is given.
"""

from __future__ import annotations

from collections.abc import Mapping

KV_SPACE_ENV = "VLLM_CPU_KVCACHE_SPACE"
CPU_BLOCK_SIZE = 128


def kv_space_gib(env: Mapping[str, str]) -> int | None:
    """The KV-cache space the stack gives vLLM, in whole GiB; None when unset or not one vLLM
    can read (it would exit on `int()`, or size the cache from the host's memory)."""
    value = env.get(KV_SPACE_ENV, "").strip()
    return int(value) if value.isdigit() else None
