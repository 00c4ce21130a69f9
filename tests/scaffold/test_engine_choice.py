"""`vllm-stack init`'s engine section: the TP and DP it picks, the refusals that say what to ask
instead, and the parsers it writes.

Oracles, by hand:
- Qwen3-8B (config.json: 32 attention heads, 8 KV heads, max_position_embeddings 40,960; 8.2 B
  parameters in bfloat16 = 15.3 GiB) on an A100-80GB: 80 x 0.9 = 72 GiB requested leaves some
  50 GiB of KV cache beside its 15.3 GiB of weights, so one GPU holds it with room and more GPUs
  are better spent on copies (data parallelism) than on a TP all-reduce;
- Qwen3.5-27B (24 attention heads, 4 KV heads, 16/48 linear-attention heads; 51.0 GiB in
  bfloat16) on a T4 (15 GiB, CC 7.5): 15 x 0.9 = 13.5 GiB requested per GPU; TP 4 puts 12.75 GiB
  of weights on each, leaving 0.75 GiB for the profiling run, non-torch memory and the KV cache:
  too little; TP 8 puts 6.4 GiB on each. So it needs 8 T4s;
- a TP that does not divide the attention heads is refused by vLLM (config/model.py
  `verify_with_parallel_config`: "Total number of attention heads (32) must be divisible by
  tensor parallel size (3)").
"""

from __future__ import annotations

import msgspec
import pytest

from vllm_serving.catalog.gpus import GpuSpec, find_gpu
from vllm_serving.catalog.models import ModelArchitecture, find_model
from vllm_serving.engine.release_registry import release_for_tag
from vllm_serving.planner.capacity import CapacityInputs, plan
from vllm_serving.scaffold import engine_choice
from vllm_serving.scaffold.engine_choice import (
    PARSERS_BY_MODEL_TYPE,
    DoesNotFit,
    Unworkable,
    choose_engine,
    gpus_needed,
    nice_context,
    parsers,
    vllm_dtype,
)


def model(name: str) -> ModelArchitecture:
    found = find_model(name)
    assert found is not None
    return found


def gpu(name: str) -> GpuSpec:
    found = find_gpu(name)
    assert found is not None
    return found


QWEN3_8B, QWEN35_27B = model("Qwen3-8B"), model("Qwen3.5-27B")
A100, T4, V100 = gpu("A100-80GB"), gpu("T4"), gpu("V100-32GB")


# --- what init picks ------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [2, 4])
def test_a_model_one_gpu_holds_with_room_gets_one_copy_per_gpu(count: int) -> None:
    e = choose_engine(QWEN3_8B, A100, count)
    assert (e.tp, e.dp, e.roomy, e.smallest_tp) == (1, count, True, 1)
    # its whole context fits: 40,960 tokens x 144 KiB of KV each is 5.6 GiB
    assert (e.max_model_len, e.limited_by) == (40960, "model")
    assert e.dtype == "bfloat16"  # A100 (CC 8.0) computes in the checkpoint's own bfloat16


def test_one_gpu_is_one_engine() -> None:
    e = choose_engine(QWEN3_8B, A100, 1)
    assert (e.tp, e.dp, e.roomy, e.smallest_tp) == (1, 1, True, 1)


def test_without_room_for_copies_the_largest_tp_that_splits_the_heads_runs() -> None:
    """Qwen3.5-27B in float16 on eight V100-32GB: 8 divides 24 heads, 4 KV heads (by replication)
    and 16/48 linear heads; one engine over all eight rather than copies that leave less KV cache
    than weights."""
    e = choose_engine(QWEN35_27B, V100, 8)
    assert (e.tp, e.dp) == (8, 1)
    assert e.smallest_tp < e.tp and e.dtype == "half"


def test_an_asked_tp_and_dp_are_kept_and_checked() -> None:
    e = choose_engine(QWEN3_8B, A100, 8, tp=2, dp=2)
    assert (e.tp, e.dp, e.roomy, e.smallest_tp) == (2, 2, True, 2)
    e = choose_engine(QWEN3_8B, A100, 4, dp=2)
    assert (e.dp, e.smallest_tp) == (2, 1)
    e = choose_engine(QWEN3_8B, A100, 4, tp=2)
    assert (e.tp, e.dp, e.smallest_tp) == (2, 1, 2)


def test_an_asked_max_model_len_is_written_as_asked() -> None:
    e = choose_engine(QWEN3_8B, A100, 1, max_model_len=16384)
    assert e.max_model_len == 16384


def test_a_context_the_memory_limits_is_written_whole_k_below_the_models() -> None:
    """Qwen3-8B on one L4 (22.5 GiB): 22.5 x 0.9 = 20.2 GiB requested, 15.3 of weights and some
    1.5 of activations and CUDA context leave about 3.4 GiB, 144 KiB a token: some 25K tokens,
    short of the model's 40,960."""
    e = choose_engine(QWEN3_8B, gpu("L4"), 1)
    assert e.limited_by == "memory"
    assert 16384 <= e.max_model_len <= 28672 and e.max_model_len % 1024 == 0


def test_the_context_is_sized_with_the_tags_release() -> None:
    """What `vllm-stack capacity` says for the release the image runs: the planner's figure at
    that release's memory accounting, rounded down to whole K."""
    for tag, version in (("v0.12.0", (0, 12, 0)), ("v0.19.1", (0, 19, 1)), ("v0.20.2", (0, 20, 2))):
        e = choose_engine(QWEN3_8B, gpu("L4"), 1, tag=tag)
        # at the 0.9 the stack writes, also where the release's own default is 0.92 (v0.20.2's
        # config/cache.py)
        assert e.gpu_memory_utilization == 0.9
        longest = plan(CapacityInputs(model=QWEN3_8B, gpu=gpu("L4"), tp=1, max_model_len=40960,
                                      gpu_memory_utilization=0.9, vllm_version=version)).max_model_len_that_fits
        assert e.max_model_len == longest // 1024 * 1024, tag


def test_a_context_is_rounded_down_to_whole_k() -> None:
    assert nice_context(236400) == 235520 == 230 * 1024
    assert nice_context(1023) == 1023 and nice_context(2048) == 2048


# --- what it refuses, and what the message asks for instead ---------------------------------------

@pytest.mark.parametrize(("count", "asked", "message"), [
    (8, {"tp": 8, "dp": 2}, "--tp 8 x --dp 2 needs 16 GPUs; 8 x A100-80GB has 8"),
    (2, {"tp": 4}, "--tp 4 needs 4 GPUs; 2 x A100-80GB has 2"),
    (2, {"dp": 3}, "--dp 3 needs at least 3 GPUs; 2 x A100-80GB has 2"),
    (4, {"tp": 3}, "--tp 3 does not split the model's heads evenly on A100-80GB; leave --tp out and init picks "
                   "one that does"),
    (1, {"max_model_len": 50000}, "--max-model-len 50000 is beyond the model's own limit (40960 tokens, "
                                  "max_position_embeddings)"),
])
def test_an_asked_value_that_cannot_serve_is_refused_with_why(count: int, asked: dict[str, int],
                                                              message: str) -> None:
    with pytest.raises(Unworkable) as refused:
        choose_engine(QWEN3_8B, A100, count, **asked)
    assert str(refused.value) == message


@pytest.mark.parametrize(("name", "tp"), [
    # 40 attention heads split 5 ways, but 8 KV heads neither split nor replicate over 5
    # (vLLM config/model.py: num_key_value_heads % tp == 0, or tp % num_key_value_heads == 0)
    ("Qwen3-14B", 5),
    # 24 heads and 4 KV heads (replicated) take 12, the 16 linear-attention key heads do not
    # (vLLM's GatedDeltaNet shards them: models/qwen3_next.py, num_k_heads // tp_size)
    ("Qwen3.5-27B", 12),
])
def test_a_tp_that_splits_the_attention_heads_but_not_the_others_is_refused(name: str, tp: int) -> None:
    with pytest.raises(Unworkable) as refused:
        choose_engine(model(name), A100, tp, tp=tp)
    assert str(refused.value) == (f"--tp {tp} does not split the model's heads evenly on A100-80GB; leave --tp "
                                  "out and init picks one that does")


def test_an_asked_tp_too_small_for_the_weights_says_so() -> None:
    with pytest.raises(Unworkable) as refused:
        choose_engine(QWEN35_27B, T4, 8, tp=1)
    assert str(refused.value) == ("--tp 1 does not hold the weights and a 4096-token request on T4; leave --tp "
                                  "out and init picks one that does")


def test_too_few_gpus_say_how_many_it_takes() -> None:
    assert gpus_needed(QWEN35_27B, T4) == 8
    with pytest.raises(DoesNotFit) as refused:
        choose_engine(QWEN35_27B, T4, 1)
    assert str(refused.value) == ("1 x T4: the weights (51.0 GiB) and a 4096-token request do not fit; it needs "
                                  "8 GPUs of this kind (tensorParallelSize 8)")
    assert refused.value.gpus_needed == 8


def test_copies_asked_for_that_leave_each_too_few_gpus_are_refused() -> None:
    with pytest.raises(Unworkable) as refused:
        choose_engine(QWEN35_27B, T4, 8, dp=2)
    assert str(refused.value) == "--dp 2: each engine needs 8 x T4; 8 x T4 gives 4"


def test_a_model_no_tp_up_to_64_serves_says_so() -> None:
    """Qwen3.5-397B-A17B: 739 GiB; its 32 attention heads allow TP 32 at most, and 32 T4s hold
    32 x 13.5 = 432 GiB."""
    with pytest.raises(DoesNotFit) as refused:
        choose_engine(model("Qwen3.5-397B-A17B"), T4, 8)
    assert str(refused.value) == "8 x T4: the model does not fit, nor on up to 64 of them"
    assert refused.value.gpus_needed is None


def test_a_model_beyond_the_largest_tp_gives_no_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_choice, "MAX_GPUS", 4)  # it needs 8 T4s, beyond the largest TP looked at
    with pytest.raises(DoesNotFit) as refused:
        choose_engine(QWEN35_27B, T4, 2)
    assert str(refused.value) == "2 x T4: the model does not fit, nor on up to 4 of them"
    assert refused.value.gpus_needed is None


# --- dtype ----------------------------------------------------------------------------------------

def test_the_dtype_follows_the_gpus_compute_capability() -> None:
    """bfloat16 needs CC 8.0 (vLLM platforms/cuda.py check_if_supports_dtype): half below it."""
    assert vllm_dtype(QWEN3_8B, A100) == "bfloat16"
    assert vllm_dtype(QWEN3_8B, V100) == "half" and vllm_dtype(QWEN3_8B, T4) == "half"


def test_a_model_vllm_refuses_in_float16_runs_in_float32_without_bfloat16() -> None:
    refusing = QWEN3_8B.model_copy(update={"refuses_float16": True})
    assert vllm_dtype(refusing, V100) == "float32"
    assert vllm_dtype(refusing, A100) == "bfloat16"


def test_float32_is_sized_at_four_bytes_a_parameter() -> None:
    """Qwen3-8B in float32: 8.19 B parameters x 4 B = 30.5 GiB, more than one V100-32GB's
    28.8 GiB budget: TP 2, 15.3 GiB each (in float16 one GPU would hold its 15.3 GiB)."""
    refusing = QWEN3_8B.model_copy(update={"refuses_float16": True})
    e = choose_engine(refusing, V100, 2)
    assert (e.tp, e.dp, e.dtype) == (2, 1, "float32")
    assert 15.0 < e.weights_gib_per_gpu < 15.6


# --- parsers --------------------------------------------------------------------------------------

# vLLM v0.19.1's registries: vllm/reasoning/__init__.py and vllm/tool_parsers/__init__.py
# (the names each registers; the subset the table may name).
VLLM_0_19_REASONING = {"deepseek_r1", "openai_gptoss", "qwen3"}
VLLM_0_19_TOOLS = {"hermes", "llama3_json", "openai", "qwen3_coder"}


@pytest.mark.parametrize(("model_type", "expected"), [
    # vLLM docs/features/tool_calling.md "Qwen Models": Qwen2.5 and Qwen3 chat templates emit
    # Hermes-style calls; Qwen3 thinks in <think> (the qwen3 reasoning parser)
    ("qwen2", (None, "hermes")), ("qwen2_moe", (None, "hermes")),
    ("qwen3", ("qwen3", "hermes")), ("qwen3_moe", ("qwen3", "hermes")), ("qwen3_next", ("qwen3", "hermes")),
    # the Qwen3.5 recipe: Qwen3-Coder XML tool calls
    ("qwen3_5", ("qwen3", "qwen3_coder")), ("qwen3_5_moe", ("qwen3", "qwen3_coder")),
    # Llama 3.1+: JSON tool calls (docs "Llama Models"); gpt-oss: Harmony (the gpt-oss recipe)
    ("llama", (None, "llama3_json")), ("gpt_oss", ("openai_gptoss", "openai")),
    # a model type with no known parser gets none
    ("gemma3", (None, None)),
])
def test_each_model_type_gets_the_parsers_vllm_documents_for_it(model_type: str,
                                                                expected: tuple[str | None, str | None]) -> None:
    typed = QWEN3_8B.model_copy(update={"model_type": model_type})
    assert parsers(typed, "v0.19.1") == expected


def test_every_parser_the_table_names_is_registered_by_vllm() -> None:
    reasoning = {r for r, _ in PARSERS_BY_MODEL_TYPE.values() if r}
    tools = {t for _, t in PARSERS_BY_MODEL_TYPE.values() if t}
    assert reasoning <= VLLM_0_19_REASONING and tools <= VLLM_0_19_TOOLS


def test_a_parser_the_release_lacks_is_not_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """vLLM refuses an unknown --reasoning-parser or --tool-call-parser at start-up: a release
    without the model's parser gets neither key."""
    release, warning = release_for_tag("v0.19.1")
    bare = msgspec.structs.replace(release, reasoning_parsers={}, tool_parsers={})
    monkeypatch.setattr(engine_choice, "release_for_tag", lambda tag: (bare, warning))
    assert parsers(QWEN3_8B, "v0.19.1") == (None, None)
    only_tools = msgspec.structs.replace(release, reasoning_parsers={})
    monkeypatch.setattr(engine_choice, "release_for_tag", lambda tag: (only_tools, warning))
    assert parsers(QWEN3_8B, "v0.19.1") == (None, "hermes")
