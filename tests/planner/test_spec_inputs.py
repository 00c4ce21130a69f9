"""What a stack's settings change in the plan through `spec_inputs` (vLLM v0.19.1, paths under
the wheel's `vllm/`)."""

from __future__ import annotations

from tests.stack_builders import make_spec
from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS
from vllm_serving.planner.capacity import CapacityInputs, plan, plan_capacity, spec_inputs

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


def test_disabling_the_hybrid_kv_cache_manager_reaches_the_plan() -> None:
    """config/vllm.py VllmConfig.__post_init__: --disable-hybrid-kv-cache-manager turns the manager off,
    so a sliding-window model's layers are all sized for the whole context (kv_sizing)."""
    assert spec_inputs(make_spec("a100")).hybrid_kv_cache_manager is True
    off = make_spec("a100", engine={"extraArgs": ["--disable-hybrid-kv-cache-manager"]})
    assert spec_inputs(off).hybrid_kv_cache_manager is False


def test_a_hybrid_model_keeps_the_v1_runner_in_v0_26_and_a_dense_one_does_not() -> None:
    """v0.26.0 config/vllm.py `_is_default_v2_model_runner_model`: a hybrid model (Qwen3.5's Gated
    DeltaNet layers) stays on the v1 runner, which samples the profiling rows with FlashInfer on an
    H100; a dense model runs the v2 runner, which samples greedily in the model dtype."""
    def sampler_words(name: str, tp: int) -> str:
        planned = plan(CapacityInputs(model=MODELS[name], gpu=GPUS["H100-80GB"], tp=tp, vllm_version=(0, 26, 0)))
        return next(t.source for t in planned.memory_terms if t.name == "activation_peak")

    assert "sampler flashinfer" in sampler_words("Qwen3.5-27B", 2)
    assert "sampler v2_model_dtype" in sampler_words("Qwen3-8B", 1)


def test_the_plan_names_the_release_whose_accounting_it_read() -> None:
    # a release with its own accounting is read as such; a patch without one reads the nearest older
    def release(version: tuple[int, ...]) -> str:
        return plan(CapacityInputs(model=MODELS["Qwen3-8B"], gpu=GPUS["H100-80GB"],
                                   vllm_version=version)).memory_accounting_release

    assert release((0, 26, 0)) == "0.26.0"
    assert release((0, 19, 5)) == "0.19.1 (nearest older read)"


def test_the_memory_breakdown_is_in_hundredths_of_a_gib() -> None:
    planned = plan_capacity(make_spec("v100"))
    for row in planned.memory_breakdown():
        assert float(row["gib"]) * 100 == round(float(row["gib"]) * 100), row
