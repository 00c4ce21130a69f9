"""One GPU's weights, per tensor, against what vLLM logged loading the model ("Model loading
took"), and the splitting rules that decide it (planner/weights_per_gpu.py)."""

from __future__ import annotations

import pytest

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import CATALOG, MODELS, LoggedLoad
from vllm_serving.planner.weights_per_gpu import _vocab_rows_per_rank, weights_per_gpu

LOADS = [(name, load) for name, entry in CATALOG.items() for load in entry.logged_loads]


@pytest.mark.parametrize(("name", "load"), LOADS, ids=[f"{n}-tp{load.tp}" for n, load in LOADS])
def test_catalog_weights_match_each_logged_load(name: str, load: object) -> None:
    """Within 2% of every public start-up that logged the model's load (the catalog's Qwen3.5-27B
    figure was 9 GiB above it when taken from a recipe's checkpoint size)."""
    entry = CATALOG[name]
    assert isinstance(load, LoggedLoad)
    found = weights_per_gpu(entry.architecture_facts(), tp=load.tp, language_model_only=load.language_model_only,
                            capability=GPUS[load.gpu].compute_capability).per_gpu_gib
    assert found == pytest.approx(load.gib_per_gpu, rel=0.02)


def test_qwen3_awq_on_a_t4_loads_what_vllm_logged() -> None:
    """samiulabir-qwen3-8b-awq-t4-eager: Qwen/Qwen3-8B-AWQ logged 5.71 GiB (4-bit projections,
    16-bit embeddings and head)."""
    awq = MODELS["Qwen3-8B"].model_copy(update={"quantization": "awq"})
    assert weights_per_gpu(awq, capability=(7, 5)).per_gpu_gib == pytest.approx(5.71, rel=0.01)


def test_kv_heads_are_duplicated_once_tp_exceeds_them() -> None:
    """Qwen3.5-27B has 4 KV heads: at TP 8 each GPU keeps a whole head, so going from TP 4 to 8
    halves everything but K and V."""
    model = MODELS["Qwen3.5-27B"]
    four, eight = (weights_per_gpu(model, tp=tp).per_gpu_gib for tp in (4, 8))
    kv = 16 * 2 * 5120 * 4 * 256 * 2 / 2**30  # 16 attention layers' K and V projections, bf16
    rotary = 4 * 262144 * 64 * 2 / 2**30  # one M-RoPE cos/sin cache (4x the positions) on every GPU
    assert eight == pytest.approx((four - kv / 4 - rotary) / 2 + kv / 4 + rotary, rel=1e-3)


def test_the_vision_tower_is_not_loaded_for_the_language_model_only() -> None:
    model = MODELS["Qwen3.5-27B"]
    full, text = weights_per_gpu(model, tp=2), weights_per_gpu(model, tp=2, language_model_only=True)
    assert full.per_gpu_gib - text.per_gpu_gib == pytest.approx(model.vision_params_billion * 1e9 * 2 / 2 / 2**30)


def test_marlin_pads_mxfp4_experts_below_hopper() -> None:
    """gpt-oss-120b at TP 4: 720-wide experts padded to 768 on both, the 2,880 hidden size to
    3,072 by Marlin on an A100 only (Hopper's Triton kernel pads the width alone)."""
    model = MODELS["gpt-oss-120b"]
    a100 = weights_per_gpu(model, tp=4, capability=(8, 0)).per_gpu_gib
    h100 = weights_per_gpu(model, tp=4, capability=(9, 0)).per_gpu_gib
    experts = 36 * 128 * 3 * 2880 * 2880 * (0.5 + 1 / 32) / 4 / 2**30  # one rank's, unpadded
    assert a100 - h100 == pytest.approx(experts * 768 * (3072 - 2880) / (720 * 2880), rel=1e-3)


def test_online_fp8_halves_the_projections_not_the_embeddings() -> None:
    model = MODELS["Llama-3.1-8B"]
    bf16, fp8 = weights_per_gpu(model), weights_per_gpu(model, online_fp8=True)
    embeddings = 2 * 128256 * 4096 * 2 / 2**30
    assert fp8.per_gpu_gib == pytest.approx(embeddings + (bf16.per_gpu_gib - embeddings) / 2, rel=0.01)


def test_a_stated_total_keeps_its_size() -> None:
    model = MODELS["Llama-3.1-8B"].model_copy(update={"weights_gib": 20.0})
    assert weights_per_gpu(model).checkpoint_gib == pytest.approx(20.0)


@pytest.mark.parametrize(("vocab", "tp", "rows"), [
    (262208, 1, 262208),  # gemma-3: already a multiple of 64 (not of 128: 262272 would be padded to 128)
    (262208, 2, 131104),  # split evenly, no second padding
    (151936, 8, 18992),  # Qwen3: 151936 = 64 x 2374
    (50257, 1, 50304),  # GPT-2's vocabulary padded up to 64 x 786
    (32001, 2, 16032),  # 32064 (64 x 501) over two ranks
])
def test_each_rank_holds_the_vocabulary_padded_to_64_rows_then_split(vocab: int, tp: int, rows: int) -> None:
    # vllm/model_executor/layers/vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE = 64,
    # num_embeddings_padded = pad_vocab_size(vocab, 64), per rank divide(num_embeddings_padded, tp_size)
    assert _vocab_rows_per_rank(vocab, tp) == rows
