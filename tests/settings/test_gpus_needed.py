"""GPUs one server takes: vLLM's `world_size_across_dp`, TP x PP x DP (vllm/config/parallel.py in
v0.19.1: `world_size = pipeline_parallel_size * tensor_parallel_size * ...` and
`world_size_across_dp = world_size * data_parallel_size`); an unset size is vLLM's default 1."""

from __future__ import annotations

import pytest

from vllm_serving.settings.engine import EngineSettings


@pytest.mark.parametrize(("tp", "pp", "dp", "gpus"), [
    (None, None, None, 1), (2, None, None, 2), (None, 3, None, 3), (None, None, 4, 4),
    (2, 2, 2, 8), (4, 1, 2, 8), (1, 2, 3, 6),
])
def test_a_server_takes_tp_times_pp_times_dp_gpus(tp: int | None, pp: int | None, dp: int | None,
                                                   gpus: int) -> None:
    engine = EngineSettings(tensor_parallel_size=tp, pipeline_parallel_size=pp, data_parallel_size=dp)
    assert engine.gpus_needed == gpus
