"""vLLM v0.19.1's KV sizing of Qwen3.5/3.6, re-derived from its source, against the planner.

`vllm_kv_figures` below transcribes, step by step, what v0.19.1 computes from a config.json and
the engine flags; each step cites the function it follows (paths under `vllm/` of the
vllm==0.19.1 wheel). It reads the model's facts from the published config.json, not from the
catalog, and shares no code with the planner. The planner must land on the same block size and
within 2% of the logged token figure and the concurrency (issue 12, "Done when").
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import pytest

from tests.paths import FIXTURES, stack_file
from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS
from vllm_serving.planner.capacity import CapacityInputs, CapacityPlan, plan, spec_inputs
from vllm_serving.settings import StackSettings
from vllm_serving.spec import resolve
from vllm_serving.stack_files.loader import load_settings, read_stack_file

GIB = 2**30
# Published config.json of Qwen/Qwen3.5-27B (vendored); the catalog takes Qwen3.6-27B(-FP8) to
# share its text_config. FP8 weights change no KV-cache shape.
QWEN3_5_27B = json.loads((FIXTURES / "hf" / "qwen3.5-27b.config.json").read_text())["text_config"]
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "fp8": 1}


def cdiv(a: int, b: int) -> int:
    """vllm/utils/math_utils.py cdiv: ceiling division."""
    return -(a // -b)


def vllm_kv_figures(text: dict[str, Any], *, tp: int, model_dtype: str, cache_dtype: str,
                    prefix_caching: bool, num_spec: int, max_model_len: int,
                    available_memory: int) -> dict[str, float]:
    """Block size, "GPU KV cache size" tokens and "Maximum concurrency" as v0.19.1 logs them."""
    # config/model.py ModelConfig.get_num_kv_heads: KV heads per GPU, replicated below one.
    num_kv_heads = max(1, text["num_key_value_heads"] // tp)
    head_size = text["head_dim"]
    kv_dtype = model_dtype if cache_dtype == "auto" else cache_dtype
    # v1/kv_cache_interface.py FullAttentionSpec.real_page_size_bytes with block_size=1
    # (model_executor/models/config.py HybridAttentionMambaModelConfig: attn_page_size_1_token).
    attn_page_size_1_token = 1 * num_kv_heads * (head_size + head_size) * DTYPE_BYTES[kv_dtype]

    # model_executor/layers/mamba/mamba_utils.py gated_delta_net_state_shape (via
    # qwen3_5.py get_mamba_state_shape_from_config): num_spec = speculative tokens.
    conv_dim = (text["linear_key_head_dim"] * text["linear_num_key_heads"] * 2
                + text["linear_value_head_dim"] * text["linear_num_value_heads"])
    conv_state_shape = (text["linear_conv_kernel_dim"] - 1 + num_spec, conv_dim // tp)
    temporal_state_shape = (text["linear_num_value_heads"] // tp, text["linear_value_head_dim"],
                            text["linear_key_head_dim"])
    # mamba_utils.py MambaStateDtypeCalculator._mamba_state_dtype: conv state in the model dtype
    # (mamba_cache_dtype "auto"); the temporal state in mamba_ssm_cache_dtype, which
    # models/config.py Qwen3_5ForConditionalGenerationConfig takes from config.json mamba_ssm_dtype.
    conv_bytes, ssm_bytes = DTYPE_BYTES[model_dtype], DTYPE_BYTES[text["mamba_ssm_dtype"]]
    # kv_cache_interface.py MambaSpec.page_size_bytes: sum of prod(shape) x dtype size.
    mamba_page_size = math.prod(conv_state_shape) * conv_bytes + math.prod(temporal_state_shape) * ssm_bytes

    # models/config.py MambaModelConfig.verify_and_update_config: with prefix caching a model
    # without SupportsMambaPrefixCaching (Qwen3.5 has none) runs "align"; without, "none" and
    # mamba_block_size = max_model_len.
    mode = "align" if prefix_caching else "none"
    # models/config.py HybridAttentionMambaModelConfig.verify_and_update_config (mode != "all"):
    # kernel_block_alignment_size 16; the block is raised from CacheConfig's 16, never lowered;
    # in align mode mamba_block_size = block_size; the mamba page is padded to the attention page.
    attn_block_size = 16 * cdiv(mamba_page_size, 16 * attn_page_size_1_token)
    block_size = max(16, attn_block_size)
    mamba_block_size = block_size if mode == "align" else max_model_len
    # (platforms/interface.py update_block_size_for_backend later resets a hybrid's block_size
    # to 16 in the worker; kv_cache_utils.py unify_kv_cache_spec_page_size scales the attention
    # block back up to the padded mamba page: the same block_size.)
    page_size = block_size * attn_page_size_1_token
    assert page_size >= mamba_page_size

    # The KV-cache layers: layer_types, plus the MTP drafter's layer(s) when speculating
    # (model_executor/models/qwen3_5_mtp.py builds them with layer_type="full_attention").
    layer_types = list(text["layer_types"])
    if num_spec:
        layer_types += ["full_attention"] * text["mtp_num_hidden_layers"]
    same_type_layers = Counter(layer_types)
    # v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size: group_size = fewest
    # layers of a type, or the most when under 1.5x; each type splits into cdiv(n, group_size).
    min_num_layers, max_num_layers = min(same_type_layers.values()), max(same_type_layers.values())
    group_size = max_num_layers if max_num_layers < min_num_layers * 1.5 else min_num_layers
    groups = [kind for kind, n in same_type_layers.items() for _ in range(cdiv(n, group_size))]

    # kv_cache_utils.py get_kv_cache_config_from_groups -> get_num_blocks.
    num_blocks = int(available_memory // page_size // group_size)
    # kv_cache_utils.py _report_kv_cache_config: "GPU KV cache size: %s tokens".
    min_block_size = min(block_size, mamba_block_size)
    num_tokens = num_blocks // len(groups) * min_block_size
    # kv_cache_utils.py get_max_concurrency_for_kv_cache_config, with
    # FullAttentionSpec.max_memory_usage_bytes = cdiv(max_model_len, block_size) x page and
    # MambaSpec.max_memory_usage_bytes = page x (2 if align else 1, + num_speculative_blocks).
    max_memory = {"full_attention": cdiv(max_model_len, block_size) * page_size,
                  "linear_attention": page_size * ((2 if mode == "align" else 1) + num_spec)}
    max_memory_usage_per_request = group_size * sum(max_memory[kind] for kind in groups)
    memory_per_block = page_size * group_size
    num_block_per_request = cdiv(max_memory_usage_per_request, memory_per_block)
    return {"block_size": block_size, "tokens": num_tokens,
            "max_concurrency": num_blocks / num_block_per_request}


def _settings(stack: str) -> StackSettings:
    return load_settings(read_stack_file(stack_file(stack)))


def _vllm_for_stack(settings: StackSettings, available_kv_gib: float) -> dict[str, float]:
    """The derivation fed with the stack's own flags: TP, dtype, KV dtype, prefix caching, MTP."""
    engine = settings.engine
    spec_cfg = engine.speculative_config
    model_dtype = {"half": "float16", None: "bfloat16"}[engine.dtype]  # V100 stack: half; A100: auto
    return vllm_kv_figures(
        QWEN3_5_27B, tp=engine.tensor_parallel_size or 1, model_dtype=model_dtype,
        cache_dtype=engine.kv_cache_dtype or "auto", prefix_caching=bool(engine.enable_prefix_caching),
        num_spec=spec_cfg.num_speculative_tokens if spec_cfg else 0,
        max_model_len=engine.max_model_len or QWEN3_5_27B["max_position_embeddings"],
        available_memory=int(available_kv_gib * GIB),
    )


def _assert_close(planned: CapacityPlan, vllm: dict[str, float]) -> None:
    assert planned.block_size == vllm["block_size"]
    assert planned.vllm_logged_kv_tokens == pytest.approx(vllm["tokens"], rel=0.02)
    assert planned.max_concurrency == pytest.approx(vllm["max_concurrency"], rel=0.02)


@pytest.mark.parametrize("stack", ["v100", "a100"])
def test_shipped_stack_matches_vllm_for_the_same_memory(stack: str) -> None:
    """Whatever memory the planner estimates, it divides it as v0.19.1 does."""
    settings = _settings(stack)
    planned = plan(spec_inputs(resolve(settings, stack)))
    assert planned.enable_prefix_caching and planned.mamba_cache_mode == "align"
    _assert_close(planned, _vllm_for_stack(settings, planned.available_kv_gib))


# Issue 12's figures, from v0.19.1's code for the memory the planner estimated when it was
# filed (14.43 GiB per V100, 64.72 GiB per A100); the planner then said 98.53 and 29.78 (block 1568).
@pytest.mark.parametrize(("stack", "available_kv_gib", "block", "concurrency"), [
    ("v100", 14.43, 400, 87.6),
    ("a100", 64.72, 1616, 27.3),
])
def test_issue_figures(stack: str, available_kv_gib: float, block: int, concurrency: float) -> None:
    settings = _settings(stack)
    vllm = _vllm_for_stack(settings, available_kv_gib)
    assert vllm["block_size"] == block and round(vllm["max_concurrency"], 1) == concurrency
    inputs = spec_inputs(resolve(settings, stack)).model_copy(update={"available_kv_gib": available_kv_gib})
    _assert_close(plan(inputs), vllm)


# vllm-project/vllm#40691, a public v0.19.0 log: `vllm serve Qwen3.5-27B --max-model-len 32768`
# (TP 1, bf16, prefix caching left at the hybrid default: off; no MTP) logged
# "GPU KV cache size: 290,864 tokens" and "Maximum concurrency for 32,768 tokens per request: 33.04x".
# It does not print the memory: 1487 blocks (of 16 layers x 3,211,264 B) is the only count giving
# both figures, i.e. 71.156-71.203 GiB; 71.18 sits inside.
def test_public_v0_19_0_log_exactly() -> None:
    vllm = vllm_kv_figures(QWEN3_5_27B, tp=1, model_dtype="bfloat16", cache_dtype="auto",
                           prefix_caching=False, num_spec=0, max_model_len=32768,
                           available_memory=int(71.18 * GIB))
    assert (vllm["block_size"], vllm["tokens"], f"{vllm['max_concurrency']:.2f}") == (784, 290_864, "33.04")
    planned = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["H100-80GB"],
                                  max_model_len=32768, available_kv_gib=71.18))
    assert not planned.enable_prefix_caching  # vLLM's default for a hybrid model
    assert (planned.block_size, planned.vllm_logged_kv_tokens, f"{planned.max_concurrency:.2f}") == (
        784, 290_864, "33.04")


@pytest.mark.parametrize("prefix_caching", [False, True])
@pytest.mark.parametrize("num_spec", [0, 1, 4])
@pytest.mark.parametrize(("tp", "kv"), [(1, "auto"), (2, "fp8"), (4, "auto"), (8, "fp8")])
def test_flag_grid_matches_vllm(prefix_caching: bool, num_spec: int, tp: int, kv: str) -> None:
    """Each input that moves vLLM's figures moves the planner's the same way (A100, 40 GiB, 128k)."""
    vllm = vllm_kv_figures(QWEN3_5_27B, tp=tp, model_dtype="bfloat16", cache_dtype=kv,
                           prefix_caching=prefix_caching, num_spec=num_spec, max_model_len=131072,
                           available_memory=40 * GIB)
    planned = plan(CapacityInputs(
        model=MODELS["Qwen3.5-27B"], gpu=GPUS["A100-80GB"], tp=tp, kv_cache_dtype=None if kv == "auto" else kv,
        max_model_len=131072, available_kv_gib=40, enable_prefix_caching=prefix_caching,
        num_speculative_tokens=num_spec, draft_attention_layers=MODELS["Qwen3.5-27B"].mtp_layers if num_spec else 0))
    _assert_close(planned, vllm)


@pytest.mark.parametrize("prefix_caching", [False, True])
@pytest.mark.parametrize("max_model_len", [256, 512, 783, 785])
def test_a_context_shorter_than_the_hybrid_block_counts_tokens_as_vllm_logs_them(
        prefix_caching: bool, max_model_len: int) -> None:
    """Without prefix caching the linear-attention groups' block is max_model_len: below the 784-token
    attention block it is the smallest block, and vLLM's token figure counts blocks of it."""
    vllm = vllm_kv_figures(QWEN3_5_27B, tp=1, model_dtype="bfloat16", cache_dtype="auto",
                           prefix_caching=prefix_caching, num_spec=0, max_model_len=max_model_len,
                           available_memory=int(71.18 * GIB))
    planned = plan(CapacityInputs(model=MODELS["Qwen3.5-27B"], gpu=GPUS["H100-80GB"], max_model_len=max_model_len,
                                  available_kv_gib=71.18, enable_prefix_caching=prefix_caching))
    assert (planned.block_size, planned.vllm_logged_kv_tokens) == (vllm["block_size"], vllm["tokens"])
    assert planned.max_concurrency == pytest.approx(vllm["max_concurrency"], rel=1e-9)
