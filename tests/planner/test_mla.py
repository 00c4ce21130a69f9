"""Multi-head latent attention (DeepSeek-V3/R1) as vLLM v0.19.1 sizes its KV cache.

`vllm_mla_figures` transcribes v0.19.1 from DeepSeek-V3's vendored config.json (paths under
`vllm/` of the wheel); it shares no code with the planner.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.paths import ROOT
from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS, ModelArchitecture, MultiLatentAttention
from vllm_serving.planner.capacity import CapacityInputs, plan
from vllm_serving.planner.mla_backends import mla_backend

GIB = 2**30
DEEPSEEK_V3 = json.loads((ROOT / "tests" / "catalog" / "configs" / "deepseek-ai--DeepSeek-V3.config.json").read_text())
KV_BYTES = {"auto": 2, "fp8": 1}
# The MLA backend each GPU generation gets, and the block size it brings
# (platforms/cuda.py _get_backend_priorities; each backend's supports_compute_capability,
# supported_kv_cache_dtypes and get_supported_kernel_block_sizes under v1/attention/backends/mla/;
# platforms/interface.py update_block_size_for_backend: 16 if the kernel takes it, else its smallest).
BACKEND_BLOCK = {
    ("H200", "auto"): ("FLASH_ATTN_MLA", 16),   # FA3 MLA, Hopper only, MultipleOf(16), no FP8 KV
    ("H200", "fp8"): ("FLASHMLA", 64),          # next in line on 9.x; FlashMLA's kernel block is 64
    ("B200", "auto"): ("FLASHINFER_MLA", 32),   # first on 10.x; blocks [32, 64]
    ("B200", "fp8"): ("FLASHINFER_MLA", 32),
    ("A100-80GB", "auto"): ("TRITON_MLA", 16),  # the only MLA backend below 9.0
    ("RTX-PRO-6000", "fp8"): ("TRITON_MLA", 16),  # 12.x is not 10.x: the second list
}


def cdiv(a: int, b: int) -> int:
    return -(a // -b)


def vllm_mla_figures(config: dict[str, Any], *, block_size: int, kv_bytes: int, max_model_len: int,
                     available_memory: int, draft_layers: int = 0) -> dict[str, float]:
    # model_executor/layers/attention/mla_attention.py MLAAttention.__init__:
    # head_size = kv_lora_rank + qk_rope_head_dim, num_kv_heads = 1 (on every TP rank).
    head_size = config["kv_lora_rank"] + config["qk_rope_head_dim"]
    # v1/kv_cache_interface.py MLAAttentionSpec.real_page_size_bytes: no separate K and V.
    page_size = block_size * 1 * head_size * kv_bytes
    # One spec for every layer: one group (kv_cache_utils.py _get_kv_cache_groups_uniform_spec).
    layers = config["num_hidden_layers"] + draft_layers
    num_blocks = available_memory // page_size // layers
    return {"block_size": block_size, "token_bytes": layers * head_size * kv_bytes,
            "tokens": num_blocks * block_size,
            "max_concurrency": num_blocks / cdiv(max_model_len, block_size)}


@pytest.mark.parametrize(("gpu", "kv"), list(BACKEND_BLOCK))
@pytest.mark.parametrize("tp", [4, 8])
def test_deepseek_v3_per_gpu_generation(gpu: str, kv: str, tp: int) -> None:
    backend, block = BACKEND_BLOCK[gpu, kv]
    chosen = mla_backend(MODELS["DeepSeek-V3"], GPUS[gpu], "bfloat16", None if kv == "auto" else kv)
    assert chosen is not None and chosen.name == backend
    vllm = vllm_mla_figures(DEEPSEEK_V3, block_size=block, kv_bytes=KV_BYTES[kv], max_model_len=163840,
                            available_memory=40 * GIB)
    planned = plan(CapacityInputs(model=MODELS["DeepSeek-V3"], gpu=GPUS[gpu], tp=tp, available_kv_gib=40,
                                  kv_cache_dtype=None if kv == "auto" else kv))
    assert (planned.block_size, planned.kv_bytes_per_token_per_gpu, planned.vllm_logged_kv_tokens) == (
        vllm["block_size"], vllm["token_bytes"], vllm["tokens"])
    assert planned.max_concurrency == pytest.approx(vllm["max_concurrency"])


def test_latent_is_576_values_without_k_and_v() -> None:
    """61 layers x 576 values x 2 bytes = 70,272 B per token on each GPU, whatever the TP: a
    per-head K and V would be 2 x 128 heads x 192 x 2 B = 98,304 B per layer at TP 1."""
    one = plan(CapacityInputs(model=MODELS["DeepSeek-R1"], gpu=GPUS["H200"], tp=8, available_kv_gib=40))
    assert one.kv_bytes_per_token_per_gpu == 61 * (512 + 64) * 2 == 70_272


def test_mtp_draft_layer_joins_the_latent_cache() -> None:
    vllm = vllm_mla_figures(DEEPSEEK_V3, block_size=16, kv_bytes=2, max_model_len=32768,
                            available_memory=40 * GIB, draft_layers=1)
    planned = plan(CapacityInputs(model=MODELS["DeepSeek-V3"], gpu=GPUS["H200"], tp=8, available_kv_gib=40,
                                  max_model_len=32768, num_speculative_tokens=1, draft_attention_layers=1))
    assert (planned.kv_bytes_per_token_per_gpu, planned.vllm_logged_kv_tokens) == (vllm["token_bytes"], vllm["tokens"])


def test_mla_disabled_is_per_head_attention() -> None:
    """VLLM_MLA_DISABLE=1: DeepseekV2Attention, qk_nope + qk_rope = 192 per head, 128 heads split by TP."""
    planned = plan(CapacityInputs(model=MODELS["DeepSeek-V3"], gpu=GPUS["H200"], tp=8, available_kv_gib=40,
                                  mla_disabled=True))
    assert planned.kv_bytes_per_token_per_gpu == 61 * 2 * (128 // 8) * 192 * 2
    assert planned.block_size == 16


# vllm-project/vllm#15871 (a V1 engine, v0.8.3.dev): DeepSeek-V2-Lite-Chat in bfloat16 refused a
# 32768-token max_model_len with "0.95 GiB KV cache is needed" - 27 layers x 576 x 2 B x 32768.
# Its config.json: https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite-Chat/blob/main/config.json
DEEPSEEK_V2_LITE = ModelArchitecture(
    architecture="DeepseekV2ForCausalLM", model_type="deepseek_v2", family="deepseek", params_billion=15.7,
    num_hidden_layers=27, hidden_size=2048, intermediate_size=10944, vocab_size=102400,
    max_position_embeddings=163840, num_attention_heads=16, num_key_value_heads=16, head_dim=192,
    full_attention_layers=27, mla=MultiLatentAttention(kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128,
                                                       v_head_dim=128))


def test_public_deepseek_v2_lite_figure() -> None:
    planned = plan(CapacityInputs(model=DEEPSEEK_V2_LITE, gpu=GPUS["A100-80GB"], max_model_len=32768,
                                  available_kv_gib=0.93))
    needed = planned.blocks_per_request * planned.block_size * planned.kv_bytes_per_token_per_gpu
    assert f"{needed / GIB:.2f}" == "0.95"
    assert not planned.fits_one_request  # vLLM refused it with 0.93 GiB available


@pytest.mark.parametrize("gpu", ["V100-32GB", "T4"])
def test_no_mla_backend_below_ampere(gpu: str) -> None:
    """MLA's prefill is FlashAttention 2 (CC 8.0+): the rule model-mla-gpu-unsupported refuses it."""
    assert mla_backend(MODELS["DeepSeek-V3"], GPUS[gpu], "float16", None) is None


def test_blackwell_falls_back_to_cutlass_mla_before_triton() -> None:
    """v0.19.1 platforms/cuda.py `_get_backend_priorities(use_mla=True)` on CC 10.x: FLASHINFER_MLA,
    then CUTLASS_MLA. FlashInfer MLA refuses a qk_nope_head_dim outside [64, 128, 192]
    (flashinfer_mla.py `supports_combination`), so a DeepSeek-V3 variant with 96 gets CUTLASS MLA,
    whose kernel block is 128 (cutlass_mla.py `get_supported_kernel_block_sizes`), not the
    other GPUs' list's TRITON_MLA with 16."""
    base = MODELS["DeepSeek-V3"]
    assert base.mla is not None
    variant = base.model_copy(update={"mla": base.mla.model_copy(update={"qk_nope_head_dim": 96})})
    chosen = mla_backend(variant, GPUS["B200"], "bfloat16", None)
    assert chosen is not None and chosen.name == "CUTLASS_MLA"
    planned = plan(CapacityInputs(model=variant, gpu=GPUS["B200"], tp=8, available_kv_gib=40))
    assert planned.block_size == 128
