"""The capacity planner: vLLM's KV arithmetic, the worked example, the shipped stacks."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.stack_builders import edit, shipped_settings, spec_of
from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.hf_config import load_hf_config
from vllm_serving.catalog.models import MODELS, ModelArchitecture
from vllm_serving.planner.capacity import (
    DEFAULT_GPU_MEMORY_UTILIZATION,
    CapacityInputs,
    compute_dtype,
    parse_vllm_version,
    plan,
    plan_capacity,
)

FIXTURES = ROOT / "tests" / "fixtures" / "hf"


@pytest.fixture(scope="module")
def qwen3_4b() -> ModelArchitecture:
    return load_hf_config(FIXTURES / "qwen3-4b.config.json")


# A vLLM start-up log: Qwen3-4B on an L4, 11.47 GiB available -> 83,488 tokens bf16, 166,992 fp8.
@pytest.mark.parametrize(("kv_dtype", "logged"), [(None, 83_488), ("fp8", 166_992)])
def test_worked_example_within_one_percent(qwen3_4b: ModelArchitecture, kv_dtype: str | None,
                                           logged: int) -> None:
    result = plan(CapacityInputs(model=qwen3_4b, gpu=GPUS["L4"], available_kv_gib=11.47,
                                 kv_cache_dtype=kv_dtype))
    assert abs(result.kv_cache_tokens - logged) / logged < 0.01
    assert result.kv_cache_tokens % 16 == 0  # whole blocks
    assert result.vllm_logged_kv_tokens == result.kv_cache_tokens  # dense: one KV group


def test_kv_bytes_per_token_formula(qwen3_4b: ModelArchitecture) -> None:
    result = plan(CapacityInputs(model=qwen3_4b, gpu=GPUS["L4"]))
    assert result.kv_bytes_per_token_per_gpu == 2 * 36 * 8 * 128 * 2


def test_estimate_without_log_is_close_to_vllm(qwen3_4b: ModelArchitecture) -> None:
    """Budget 0.9 x L4 minus weights and overheads lands within 1% of the 11.47 GiB vLLM logged."""
    result = plan(CapacityInputs(model=qwen3_4b, gpu=GPUS["L4"], vllm_version=(0, 19, 1)))
    assert result.gpu_memory_utilization == DEFAULT_GPU_MEMORY_UTILIZATION
    assert result.max_model_len == qwen3_4b.max_position_embeddings
    # the log states no version, weights or utilization: 3%, the corpus's bound, not a fitted 1%
    assert abs(result.available_kv_gib - 11.47) / 11.47 < 0.03


def test_kv_heads_replicate_below_one_per_gpu() -> None:
    """Qwen3.5-27B at TP 8: 4 KV heads -> max(1, 4 // 8) = 1 per GPU, 16 KiB/token in bf16."""
    result = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=8))
    assert result.kv_bytes_per_token_per_gpu == 16 * 1024


def test_pipeline_stages_split_layers_and_weights() -> None:
    one = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=4))
    two = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=4, pp=2))
    assert two.kv_bytes_per_token_per_gpu * 2 == one.kv_bytes_per_token_per_gpu
    # the layers split in two; the first stage keeps the embedding (and the vision tower), the
    # last the output head: the fuller stage holds half the layers plus the larger of those
    vocab_share = 248320 * 5120 * 2 / 4 / 2**30  # one embedding table's TP-4 slice, GiB
    assert one.weights_gib_per_gpu / 2 < two.weights_gib_per_gpu < one.weights_gib_per_gpu / 2 + vocab_share


def test_hybrid_linear_state_and_block_size() -> None:
    """48 Gated DeltaNet layers at TP 8: conv (10240/8 x 3 x 2 B) + state (6 x 128 x 128 x 4 B)."""
    result = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["V100-32GB"], tp=8,
                                 dtype="half"))
    per_layer = 1280 * 3 * 2 + 6 * 128 * 128 * 4
    assert result.linear_state_bytes_per_seq_per_gpu == 48 * per_layer
    # attention block grown (in steps of 16) until a page holds one layer's state
    assert result.block_size == 400 and result.block_size * 2 * 256 * 2 >= per_layer
    # vLLM logs the pool divided by its 4 layer groups (1 attention + 3 linear)
    assert result.vllm_logged_kv_tokens == pytest.approx(result.kv_cache_tokens / 4, rel=0.01)


def test_weights_that_do_not_fit() -> None:
    result = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["V100-32GB"], dtype="half"))
    assert not result.weights_fit and not result.fits_one_request
    assert result.kv_cache_tokens == 0 and result.max_model_len_that_fits == 0


def test_context_that_does_not_fit_reports_the_longest_that_does() -> None:
    result = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=4,
                                 available_kv_gib=2.0, max_model_len=262_144))
    assert result.weights_fit and not result.fits_one_request
    shorter = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=4,
                                  available_kv_gib=2.0, max_model_len=result.max_model_len_that_fits))
    assert shorter.fits_one_request


def test_cuda_graphs_count_from_v0_21() -> None:
    # the same utilization for both: v0.20+ defaults to 0.92, which would outweigh the graph term
    old = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=4,
                              vllm_version=(0, 19, 1), gpu_memory_utilization=0.9))
    new = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=4,
                              vllm_version=(0, 21, 0), gpu_memory_utilization=0.9))
    assert old.cuda_graph_gib == 0 and new.cuda_graph_gib > 0
    assert new.available_kv_gib < old.available_kv_gib


def test_dtype_resolution() -> None:
    model = MODELS["Qwen3.5-27B"]
    assert compute_dtype(model, GPUS["V100-32GB"], None) == "float16"
    assert compute_dtype(model, GPUS["A100-80GB"], "auto") == "bfloat16"
    assert compute_dtype(model, GPUS["A100-80GB"], "half") == "float16"
    assert compute_dtype(model, GPUS["A100-80GB"], "float") == "float32"


@pytest.mark.parametrize(("tag", "version"), [
    ("v0.19.1", (0, 19, 1)), ("v0.19.1-cu130", (0, 19, 1)), ("0.20.0", (0, 20, 0)),
    ("latest", None), ("nightly", None), (None, None),
])
def test_parse_vllm_version(tag: str | None, version: tuple[int, int, int] | None) -> None:
    assert parse_vllm_version(tag) == version


def test_as_dict_keys_and_rounding() -> None:
    v100 = shipped_settings("v100")
    data = plan_capacity(spec_of(v100)).as_dict()
    for key in ("weights_gib_per_gpu", "kv_bytes_per_token_per_gpu", "available_kv_gib",
                "kv_cache_tokens", "max_concurrency", "budget_gib", "overhead_gib",
                "linear_state_bytes_per_seq_per_gpu", "max_model_len", "fits_one_request"):
        assert key in data
    assert all(round(v, 2) == v for k, v in data.items() if isinstance(v, float) and k != "judged_error")
    assert round(data["judged_error"], 4) == data["judged_error"] > 0  # a fraction: four places
    assert data == plan_capacity(spec_of(v100)).as_dict()  # deterministic


def test_shipped_stacks_fit() -> None:
    v100, a100 = shipped_settings("v100"), shipped_settings("a100")
    small = plan_capacity(spec_of(v100))
    big = plan_capacity(spec_of(a100))
    assert small.fits_one_request and small.max_concurrency > 50  # 8k context, 8 GPUs
    assert big.fits_one_request and big.max_concurrency > 10  # 256k context, FP8 KV
    assert big.kv_bytes_per_token_per_gpu == 17 * 2 * 1 * 256 * 1  # 16 layers + 1 MTP, fp8


def test_mtp_draft_adds_attention_layer() -> None:
    a100 = shipped_settings("a100")
    without = edit(a100, engine={"speculative_config": None})
    assert plan_capacity(spec_of(without)).kv_bytes_per_token_per_gpu == 16 * 2 * 256


def test_config_json_matches_catalog_layout() -> None:
    parsed = load_hf_config(Path(FIXTURES / "qwen3.5-27b.config.json"))
    ours = plan(CapacityInputs(model=parsed, gpu=GPUS["A100-80GB"], tp=4, available_kv_gib=40))
    catalog = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=4,
                                  available_kv_gib=40))
    assert ours.kv_cache_tokens == catalog.kv_cache_tokens
    assert ours.max_concurrency == catalog.max_concurrency


def test_prefix_caching_defaults_to_vllms_choice_for_the_model(qwen3_4b: ModelArchitecture) -> None:
    """Unset, vLLM turns prefix caching on for attention-only models and off for hybrids;
    turned on, a hybrid's linear-attention groups keep 2 state blocks per request ("align")."""
    dense = plan(CapacityInputs(model=qwen3_4b, gpu=GPUS["L4"], available_kv_gib=10))
    assert dense.enable_prefix_caching and dense.mamba_cache_mode == "none"
    hybrid = CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=4, available_kv_gib=40,
                            max_model_len=32768)
    off = plan(hybrid)
    on = plan(hybrid.model_copy(update={"enable_prefix_caching": True}))
    assert (off.enable_prefix_caching, off.mamba_cache_mode) == (False, "none")
    assert (on.enable_prefix_caching, on.mamba_cache_mode) == (True, "align")
    attention_blocks = math.ceil(32768 / off.block_size)
    assert off.blocks_per_request == attention_blocks + 3 * 1  # 3 linear-attention groups
    assert on.blocks_per_request == attention_blocks + 3 * 2
    assert on.block_size == off.block_size and on.max_concurrency < off.max_concurrency


def test_mtp_tokens_grow_the_conv_state_and_the_block() -> None:
    """a100 (TP 4, FP8 KV, MTP 4): the conv state keeps 3 + 4 rows, which takes the attention
    block from 1568 to 1616 tokens; each of 3 linear groups holds 2 + 4 blocks per request."""
    a100 = shipped_settings("a100")
    with_mtp = plan_capacity(spec_of(a100))
    without = plan_capacity(spec_of(edit(a100, engine={"speculative_config": None})))
    assert (with_mtp.num_speculative_tokens, with_mtp.block_size, without.block_size) == (4, 1616, 1568)
    conv_row = 10240 // 4 * 2  # conv channels per GPU x bf16
    assert with_mtp.linear_state_bytes_per_seq_per_gpu - without.linear_state_bytes_per_seq_per_gpu == 48 * 4 * conv_row
    assert with_mtp.blocks_per_request == math.ceil(262144 / 1616) + 3 * (2 + 4)
    assert without.blocks_per_request == math.ceil(262144 / 1568) + 3 * 2


def test_the_engine_dtype_sets_the_bytes_of_the_kv_cache() -> None:
    """`engine.dtype: float32` on a bfloat16 checkpoint: vLLM computes in float32 (config/model.py
    `_get_and_verify_dtype` takes a named dtype as is) and an `auto` KV cache is the model's dtype
    (utils/torch_utils.py `kv_cache_dtype_str_to_dtype`). Qwen3-8B (config.json): 36 layers,
    8 KV heads of 128: 36 x (K and V) x 8 x 128 x 4 bytes per token, twice bfloat16's."""
    fp32 = plan(CapacityInputs(model=MODELS["Qwen3-8B"], gpu=GPUS["A100-80GB"], dtype="float32"))
    assert fp32.dtype == "float32"
    assert fp32.kv_bytes_per_token_per_gpu == 36 * 2 * 8 * 128 * 4
    auto = plan(CapacityInputs(model=MODELS["Qwen3-8B"], gpu=GPUS["A100-80GB"]))
    assert auto.dtype == "bfloat16" and auto.kv_bytes_per_token_per_gpu == 36 * 2 * 8 * 128 * 2


def test_the_plan_says_where_its_vllm_version_came_from(qwen3_4b: ModelArchitecture) -> None:
    # `vllm-stack capacity --vllm-version 0.19.1` gives the version itself; without one the project's
    # pinned release stands in and the plan says so
    given = plan(CapacityInputs(model=qwen3_4b, gpu=GPUS["L4"], vllm_version=(0, 19, 1)))
    assert (given.vllm_version, given.vllm_version_source) == ("0.19.1", "given")
    pinned = plan(CapacityInputs(model=qwen3_4b, gpu=GPUS["L4"]))
    assert pinned.vllm_version_source == f"the project's pinned v{pinned.vllm_version}"


def test_v0_24_runs_a_listed_architecture_on_the_v2_runner(qwen3_4b: ModelArchitecture) -> None:
    """vLLM v0.24.0 config/vllm.py: DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES lists Qwen3ForCausalLM,
    and `_is_default_v2_model_runner_model` runs any listed architecture on the v2 runner, whose
    profiling samples greedily in the model dtype: the plan's activation term says so."""
    planned = plan(CapacityInputs(model=qwen3_4b, gpu=GPUS["H100-80GB"], vllm_version=(0, 24, 0)))
    activation = next(t.source for t in planned.memory_terms if t.name == "activation_peak")
    assert "sampler v2_model_dtype" in activation


def test_the_plans_json_keeps_the_judged_error_to_a_hundredth_of_a_percent() -> None:
    # the error band is a few tenths of a percent: rounded to 2 places like the GiB figures it would read 0.01
    planned = plan_capacity(spec_of(shipped_settings("v100")))
    assert round(planned.judged_error, 2) != round(planned.judged_error, 4)  # the case this guards
    assert planned.as_dict()["judged_error"] == round(planned.judged_error, 4)


def test_a_float32_checkpoint_loads_at_the_dtype_it_is_served_in(qwen3_4b: ModelArchitecture) -> None:
    # vLLM casts the weights to --dtype as it loads them: a checkpoint stored in float32 (4 bytes a
    # parameter on disk) served in bfloat16 takes what the bfloat16 checkpoint takes, 2 bytes a parameter
    stored_bf16 = plan(CapacityInputs(model=qwen3_4b, gpu=GPUS["L4"], dtype="bfloat16"))
    stored_fp32 = plan(CapacityInputs(model=qwen3_4b.model_copy(update={"weights_dtype": "float32"}), gpu=GPUS["L4"],
                                      dtype="bfloat16"))
    assert stored_fp32.weights_gib_per_gpu == pytest.approx(stored_bf16.weights_gib_per_gpu, rel=1e-6)
    assert stored_bf16.weights_gib_per_gpu == pytest.approx(4.02e9 * 2 / 2**30, rel=0.02)  # Qwen3-4B: 4.02B
