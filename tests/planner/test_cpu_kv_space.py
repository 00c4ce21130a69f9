"""The KV space a CPU stack gives vLLM, read as vLLM v0.19.1 reads VLLM_CPU_KVCACHE_SPACE:
`envs.py` parses it with `int(os.getenv(...))` (a fraction or a unit makes vLLM exit), and
`platforms/cpu.py` `get_device_total_memory` multiplies a set value by GiB; unset, vLLM sizes the
cache from the host's free memory, which no stack file says."""

from __future__ import annotations

import pytest

from vllm_serving.planner.cpu_kv_space import CPU_BLOCK_SIZE, KV_SPACE_ENV, kv_space_gib


@pytest.mark.parametrize(("value", "gib"), [("40", 40), (" 8 ", 8), ("0", 0), ("120", 120)])
def test_a_whole_number_of_gib_is_the_kv_space(value: str, gib: int) -> None:
    assert kv_space_gib({KV_SPACE_ENV: value}) == gib


@pytest.mark.parametrize("value", ["", "4.5", "8GiB", "-1", "eight"])
def test_a_value_vllm_cannot_read_as_a_whole_number_gives_no_space(value: str) -> None:
    assert kv_space_gib({KV_SPACE_ENV: value}) is None


def test_unset_or_under_another_name_gives_no_space() -> None:
    assert kv_space_gib({}) is None
    assert kv_space_gib({"VLLM_CPU_KVCACHE": "40", "vllm_cpu_kvcache_space": "40"}) is None


def test_the_names_are_vllms() -> None:
    # envs.py: "VLLM_CPU_KVCACHE_SPACE"; platforms/cpu.py check_and_update_config: block_size = 128
    assert (KV_SPACE_ENV, CPU_BLOCK_SIZE) == ("VLLM_CPU_KVCACHE_SPACE", 128)
