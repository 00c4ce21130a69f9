"""The attention backend vLLM v0.19.1 selects per layer, read from the committed v0.19.1 registry.

Each expected backend and reason is vLLM v0.19.1's own (paths inside the wheel):
- the order tried: `platforms/cuda.py` `_get_backend_priorities` - FLASH_ATTN, FLASHINFER,
  TRITON_ATTN, FLEX_ATTENTION below capability 10, FLASHINFER first on 10.x; for MLA below 10:
  FLASH_ATTN_MLA, FLASHMLA, FLASHINFER_MLA, TRITON_MLA, FLASHMLA_SPARSE;
- the reasons: `v1/attention/backend.py` `validate_configuration` ("compute capability not
  supported", "kv_cache_dtype not supported", "attention sinks not supported", ...);
- FlashAttention from capability 8.0 (`flash_attn.py` `supports_compute_capability`), an FP8 cache
  only with FlashAttention 3 (`supports_kv_cache_dtype` -> `flash_attn_supports_fp8`: Hopper),
  sinks only from 9.0 (`supports_combination`); FlashInfer on 7.5 to 12.1 (`flashinfer.py`);
  Triton on every GPU, heads from 32 wide, sinks supported (`triton_attn.py`);
- FlashMLA on capability 9.x and 10.x, dense on Hopper only (`flashmla.py`);
- attention sinks for gpt-oss (`GptOssForCausalLM`), multimodal-prefix attention for Gemma 3
  (`config/model.py` `is_mm_prefix_lm`).
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS
from vllm_serving.engine import release_facts
from vllm_serving.engine.expressions import names_in
from vllm_serving.engine.release_registry import known_versions, load
from vllm_serving.startup.attention import AttentionQuery, kv_read_failure, layer_queries, priorities, query_for, select

V0_19 = load("0.19.1")
NON_MLA_BELOW_10 = ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"]
CC = "compute capability not supported"


def layer(capability: tuple[int, int], *, dtype: str = "bfloat16", kv: str = "auto", head_size: int = 128,
          block_size: int | None = None, use_mla: bool = False, has_sink: bool = False) -> AttentionQuery:
    """A Qwen3-like full-attention layer: 128-wide heads, 64 query heads."""
    return AttentionQuery(head_size=head_size, dtype=dtype, kv_cache_dtype=kv, capability=capability, num_heads=64,
                          block_size=block_size, use_mla=use_mla, has_sink=has_sink)


def test_v100_falls_through_to_triton_after_flashattention_and_flashinfer_refuse_it() -> None:
    verdict = select(V0_19, layer((7, 0), dtype="float16"), None)
    assert verdict is not None
    assert (verdict.backend, verdict.forced, verdict.undecided) == ("TRITON_ATTN", False, False)
    assert dict(verdict.tried) == {"FLASH_ATTN": (CC,), "FLASHINFER": (CC,)}


def test_a100_takes_flashattention_first_and_flashinfer_for_an_fp8_cache() -> None:
    plain = select(V0_19, layer((8, 0)), None)
    assert plain is not None and (plain.backend, dict(plain.tried)) == ("FLASH_ATTN", {})
    fp8 = select(V0_19, layer((8, 0), kv="fp8"), None)  # FlashAttention 2 has no FP8 cache
    assert fp8 is not None and fp8.backend == "FLASHINFER"
    assert dict(fp8.tried) == {"FLASH_ATTN": ("kv_cache_dtype not supported",)}


def test_h100_keeps_flashattention_for_an_fp8_cache_as_flashattention_3_reads_it() -> None:
    verdict = select(V0_19, layer(GPUS["H100-80GB"].compute_capability, kv="fp8"), None)
    assert verdict is not None and (verdict.backend, dict(verdict.tried)) == ("FLASH_ATTN", {})


def test_blackwell_tries_flashinfer_first() -> None:
    assert priorities(V0_19, layer((10, 0))) == ["FLASHINFER", "FLASH_ATTN", "TRITON_ATTN", "FLEX_ATTENTION"]
    assert priorities(V0_19, layer((9, 0))) == NON_MLA_BELOW_10
    verdict = select(V0_19, layer(GPUS["B200"].compute_capability), None)
    assert verdict is not None and verdict.backend == "FLASHINFER"


def test_mla_layers_have_their_own_order_and_flashmla_dense_wants_hopper() -> None:
    mla = layer((8, 0), use_mla=True, head_size=576)
    assert priorities(V0_19, mla) == ["FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA", "FLASHMLA_SPARSE"]
    verdict = select(V0_19, mla, "FLASHMLA")
    assert verdict is not None and verdict.reasons == (CC, "FlashMLA Dense is only supported on Hopper devices.")
    hopper = select(V0_19, replace(mla, capability=(9, 0)), "FLASHMLA")
    assert hopper is not None and hopper.reasons == ()


def test_a_forced_backend_is_judged_alone() -> None:
    refused = select(V0_19, layer((7, 0), dtype="float16"), "FLASHINFER")
    assert refused is not None
    assert (refused.backend, refused.forced, refused.reasons, dict(refused.tried)) == ("FLASHINFER", True, (CC,), {})
    accepted = select(V0_19, layer((8, 0)), "TRITON_ATTN")
    assert accepted is not None and (accepted.backend, accepted.forced, accepted.reasons) == ("TRITON_ATTN", True, ())


def test_every_reason_a_layer_breaks_is_given() -> None:
    # 16-wide heads with sinks on a V100: FlashInfer and FlashAttention refuse the GPU, Triton the heads
    # (it takes 32 and wider), Flex the sinks: no backend at all
    verdict = select(V0_19, layer((7, 0), dtype="float16", head_size=16, has_sink=True), None)
    assert verdict is not None and (verdict.backend, verdict.undecided) == (None, False)
    assert list(verdict.tried) == NON_MLA_BELOW_10
    assert "head_size not supported" in verdict.tried["TRITON_ATTN"]
    assert "attention sinks not supported" in verdict.tried["FLEX_ATTENTION"]


def test_sinks_on_flashattention_need_hopper() -> None:
    # FlashAttention 2 (A100) has no sinks (`supports_sink` -> `flash_attn_supports_sinks`), and the combination
    # check says why
    verdict = select(V0_19, layer((8, 0), has_sink=True), "FLASH_ATTN")
    assert verdict is not None and verdict.reasons == (
        "attention sinks not supported", "sink not supported on compute capability < 9.0")
    hopper = select(V0_19, layer((9, 0), has_sink=True), "FLASH_ATTN")
    assert hopper is not None and hopper.reasons == ()


def test_a_check_the_registry_cannot_read_decides_nothing() -> None:
    # FlashAttention's block-size check is unreadable; at the default (no block size) it cannot trip
    given = layer((8, 0), block_size=16)
    forced = select(V0_19, given, "FLASH_ATTN")
    assert forced is not None and (forced.reasons, forced.undecided) == ((), True)
    auto = select(V0_19, given, None)
    assert auto is not None and (auto.backend, auto.undecided) == (None, True)
    unset = select(V0_19, layer((8, 0)), "FLASH_ATTN")
    assert unset is not None and unset.undecided is False
    # a reason it can read refuses the backend whatever the unreadable check would say
    refused = select(V0_19, layer((7, 0), dtype="float16", block_size=16), "FLASH_ATTN")
    assert refused is not None and (refused.reasons, refused.undecided) == ((CC,), False)


def test_a_backend_the_registry_does_not_know_decides_nothing() -> None:
    assert select(V0_19, layer((8, 0)), "NO_SUCH_BACKEND") is None


def test_an_fp8_cache_triton_cannot_compile_below_capability_8_9() -> None:
    # Triton stores every fp8* as float8_e4m3fn, which Triton compiles from 8.9 (fp8e4nv)
    assert kv_read_failure(V0_19, "TRITON_ATTN", layer((8, 0), kv="fp8")) == (
        "it stores fp8 as float8_e4m3fn, which Triton compiles only from compute capability 8.9")
    assert kv_read_failure(V0_19, "TRITON_ATTN", layer((7, 5), kv="fp8_e5m2")) == (
        "it stores fp8_e5m2 as float8_e4m3fn, which Triton compiles only from compute capability 8.9")
    assert kv_read_failure(V0_19, "TRITON_ATTN", layer(GPUS["L4"].compute_capability, kv="fp8")) is None
    assert kv_read_failure(V0_19, "TRITON_ATTN", layer((8, 0))) is None  # no FP8 cache
    assert kv_read_failure(V0_19, "FLASHINFER", layer((8, 0), kv="fp8")) is None  # not read through Triton


def test_flashattention_has_no_e5m2_cache() -> None:
    assert kv_read_failure(V0_19, "FLASH_ATTN", layer((9, 0), kv="fp8_e5m2")) == (
        "it has no FP8 type for fp8_e5m2 (it raises 'Unrecognized FP8 dtype')")
    assert kv_read_failure(V0_19, "FLASH_ATTN", layer((9, 0), kv="fp8_e4m3")) is None
    assert kv_read_failure(V0_19, "FLEX_ATTENTION", layer((8, 0), kv="fp8")) is None  # no storage facts


@pytest.mark.parametrize(("sliding", "kinds"), [
    (0, [False]),  # full attention only
    (12, [False, True]),  # gpt-oss-20b: 12 of its 24 layers slide
    (24, [True]),  # every layer slides (Mistral-7B-v0.1's way)
])
def test_one_query_per_kind_of_attention_layer(sliding: int, kinds: list[bool]) -> None:
    model = MODELS["gpt-oss-20b"].model_copy(update={"sliding_window_layers": sliding})
    queries = layer_queries(layer((8, 0)), model)
    assert [q.has_sliding_window for q in queries] == kinds
    assert {replace(q, has_sliding_window=False) for q in queries} == {layer((8, 0))}


def test_the_query_carries_the_models_sinks_prefix_and_heads_per_gpu() -> None:
    a100 = GPUS["A100-80GB"]
    gpt_oss = query_for(V0_19, MODELS["gpt-oss-20b"], a100, "bfloat16", None, use_mla=False, tp=2)
    # gpt-oss: 64 heads of 64, sinks always; an unset cache is "auto"; 64 heads over TP 2
    assert (gpt_oss.head_size, gpt_oss.has_sink, gpt_oss.use_mm_prefix, gpt_oss.num_heads) == (64, True, False, 32)
    assert (gpt_oss.kv_cache_dtype, gpt_oss.capability, gpt_oss.dtype) == ("auto", (8, 0), "bfloat16")
    gemma = query_for(V0_19, MODELS["gemma-3-27b-it"], a100, "bfloat16", "fp8", use_mla=False, block_size=32,
                      text_only=True, batch_invariant=True)
    # v0.19.1 keeps Gemma 3's multimodal prefix even when the server is text-only
    assert (gemma.has_sink, gemma.use_mm_prefix, gemma.kv_cache_dtype) == (False, True, "fp8")
    assert (gemma.block_size, gemma.use_batch_invariant, gemma.use_mla) == (32, True, False)
    qwen = query_for(V0_19, MODELS["Qwen3-32B"], a100, "bfloat16", None, use_mla=False, tp=128)
    assert (qwen.head_size, qwen.num_heads) == (128, 1)  # 64 heads over 128 GPUs: still one head


def test_an_mla_layer_caches_the_compressed_latent_and_its_rope_part() -> None:
    # DeepSeek-V3: kv_lora_rank 512 + qk_rope_head_dim 64 (its config.json)
    deepseek = MODELS["DeepSeek-V3"]
    mla = query_for(V0_19, deepseek, GPUS["H200"], "bfloat16", None, use_mla=True)
    assert (mla.head_size, mla.use_mla) == (576, True)
    plain = query_for(V0_19, deepseek, GPUS["H200"], "bfloat16", None, use_mla=False)
    assert plain.head_size == deepseek.head_dim


V0_34 = load("0.34.0")
NON_MLA_V0_34 = ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION", "TURBOQUANT"]


@pytest.mark.parametrize(("capability", "first"), [((9, 0), "FLASH_ATTN"), ((8, 0), "FLASH_ATTN"),
                                                   ((10, 0), "FLASHINFER")])
def test_v0_34_picks_its_first_backend_for_a_plain_decoder_layer(capability: tuple[int, int], first: str) -> None:
    """vLLM v0.34.0 `platforms/cuda.py` `_get_backend_priorities`: FlashInfer first on 10.x unless
    the layer is non-causal (a plain decoder is causal), FlashAttention first elsewhere; the
    selector's other inputs (no context or decode-context parallelism, no KV connector, no
    restricted sliding window, no adaptive verification) are vLLM's defaults for a plain stack, so
    the first backend is valid and nothing is left undecided."""
    query = layer(capability)
    order = priorities(V0_34, query)
    assert order is not None and order[0] == first
    assert sorted(order) == sorted(NON_MLA_V0_34)
    if capability[0] == 10:
        return  # FlashInfer's checks on 10.x are not all statically readable: the preflight judges them
    verdict = select(V0_34, query, None)
    assert verdict is not None
    assert (verdict.backend, verdict.forced, verdict.undecided, dict(verdict.tried)) == (first, False, False, {})


def test_every_input_a_shipped_releases_backend_checks_read_is_given() -> None:
    """A name a check reads that the query does not give leaves the check unreadable (undecided):
    every name in every recorded release's `validate_configuration` checks is one of the inputs."""
    for version in known_versions():
        release = load(version)
        given = set(layer((9, 0)).values(release))
        read = {name for facts in release_facts.backends(release).values() for check in facts.checks or ()
                for text in (check.when, check.reason_expr) if text for name in names_in(text)}
        assert read <= given, (version, read - given)


def test_the_inputs_a_plain_stack_never_turns_on_are_vllms_defaults() -> None:
    """vLLM v0.34.0 `v1/attention/backend.py` `validate_configuration`: has_sliding_window,
    use_non_causal, use_batch_invariant, use_kv_connector, use_pcp, use_adaptive_verification,
    use_dcp and use_rswa default to False; the model runner passes use_sparse and
    use_per_head_quant_scales False and attn_type "decoder" for a decoder layer without them."""
    values = layer((9, 0)).values(V0_34)
    off = ("has_sliding_window", "use_non_causal", "use_batch_invariant", "use_kv_connector", "use_pcp",
           "use_adaptive_verification", "use_dcp", "use_rswa", "use_sparse", "use_per_head_quant_scales",
           "use_mla", "has_sink", "use_mm_prefix")
    assert {name: values[name] for name in off} == dict.fromkeys(off, False)
    assert (values["attn_type"], values["head_size"], values["num_heads"]) == ("decoder", 128, 64)
