"""What a stack's settings change in the plan through `spec_inputs` (vLLM v0.19.1, paths under
the wheel's `vllm/`)."""

from __future__ import annotations

from tests.stack_builders import make_spec
from vllm_serving.planner.capacity import plan_capacity

GIB = 2**30


def test_vllm_mla_disable_in_engine_env_plans_per_head_attention() -> None:
    """envs.py reads VLLM_MLA_DISABLE as bool(int(...)); config/model.py `ModelConfig.use_mla` is
    `is_deepseek_mla and not envs.VLLM_MLA_DISABLE`: DeepSeek-V3 then caches per-head K and V of
    qk_nope + qk_rope = 192 values, 128 heads / TP 8 = 16 per GPU, over 61 layers, in bfloat16
    (MLA would be 61 x 576 x 2 = 70,272 B)."""
    spec = make_spec("a100", model={"name": "DeepSeek-V3"},
                     engine={"tensorParallelSize": 8, "kvCacheDtype": None, "maxModelLen": 32768,
                             "speculativeConfig": None, "env": {"VLLM_MLA_DISABLE": "1"}})
    assert plan_capacity(spec).kv_bytes_per_token_per_gpu == 61 * 2 * 16 * 192 * 2 == 749_568


def test_a_cpu_stack_plans_with_the_cpu_block_size() -> None:
    """platforms/cpu.py `CpuPlatform.check_and_update_config`: block_size = 128 unless
    --block-size is given. Qwen3-0.6B (28 layers, 8 KV heads of 128, bfloat16) in 40 GiB:
    a block of one layer is 128 x 2 x 8 x 128 x 2 = 524,288 B; 40 GiB / (524,288 x 28) = 2925.7
    -> 2925 blocks of 128 = 374,400 tokens (blocks of 16 would give 374,480)."""
    planned = plan_capacity(make_spec("local", engine={"env": {"VLLM_CPU_KVCACHE_SPACE": "40"}}))
    assert planned.block_size == 128
    assert planned.page_size_bytes == 128 * 2 * 8 * 128 * 2
    assert planned.kv_cache_tokens == (40 * GIB // (524_288 * 28)) * 128 == 374_400
