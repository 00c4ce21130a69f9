"""The profiling run's activation peak of a mixture of experts: the fused-MoE workspaces.

vLLM v0.19.1 sizes them per routed token (`model_executor/layers/fused_moe/fused_moe.py`
`TritonExperts.workspace_shapes`): workspace13 (M, topk, max(N / 2, K)) and workspace2
(M, topk, max(N, K)), with N = 2 x the expert width / TP (w13's rows) and K = hidden, both alive
at once (`modular_kernel.py` `FusedMoEKernel._allocate_buffers`). The width is the catalog's
`experts.intermediateSize` (config.json's `moe_intermediate_size`); an inline architecture
without it gets a width derived from the parameter count.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
import yaml

from tests.paths import FIXTURES, ROOT
from tests.planner.test_available_memory_corpus import case_inputs
from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS, ModelArchitecture
from vllm_serving.planner.available_memory import GIB, MemoryInputs, estimate_available_memory
from vllm_serving.planner.capacity import CapacityInputs, plan
from vllm_serving.planner.memory_budget import derived_expert_intermediate_size, model_shape
from vllm_serving.planner.model_shape import moe_workspace_per_token

CONFIGS = ROOT / "tests" / "catalog" / "configs"
# catalog name -> its vendored config.json
VENDORED = {
    "Qwen3-30B-A3B": "Qwen--Qwen3-30B-A3B", "Qwen3-235B-A22B": "Qwen--Qwen3-235B-A22B",
    "Qwen3-Next-80B-A3B-Thinking": "Qwen--Qwen3-Next-80B-A3B-Thinking", "Qwen3.5-35B-A3B": "Qwen--Qwen3.5-35B-A3B",
    "Qwen3.5-122B-A10B": "Qwen--Qwen3.5-122B-A10B", "gpt-oss-20b": "openai--gpt-oss-20b",
    "gpt-oss-120b": "openai--gpt-oss-120b", "DeepSeek-V3": "deepseek-ai--DeepSeek-V3",
}


def expert_width(config_path: Path) -> int:
    """config.json's expert width: moe_intermediate_size, else (gpt-oss) intermediate_size."""
    config = json.loads(config_path.read_text())
    text = config.get("text_config", config)
    return int(text.get("moe_intermediate_size") or text["intermediate_size"])


def triton_workspace_elements(tokens: int, topk: int, width: int, hidden: int, tp: int) -> int:
    """TritonExperts.workspace_shapes: prod(workspace13) + prod(workspace2) with N = 2 x width / tp."""
    n = 2 * width // tp
    return tokens * topk * max(n // 2, hidden) + tokens * topk * max(n, hidden)


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
@pytest.mark.parametrize("name", list(VENDORED))
def test_the_planner_sizes_the_workspace_with_the_config_width(name: str, tp: int) -> None:
    model = MODELS[name]
    assert model.experts is not None
    width = expert_width(CONFIGS / f"{VENDORED[name]}.config.json")
    shape = model_shape(model, 2)
    assert shape.expert_intermediate_size == width
    true = triton_workspace_elements(1, model.experts.experts_per_token, width, model.hidden_size, tp)
    assert moe_workspace_per_token(shape, tp) == true


def _without_width(name: str) -> ModelArchitecture:
    """The catalog entry as an inline architecture that leaves experts.intermediateSize out."""
    model = MODELS[name]
    assert model.experts is not None
    return model.model_copy(update={"experts": model.experts.model_copy(update={"intermediate_size": None})})


def test_deepseek_v3_width_comes_from_its_config_not_the_estimate() -> None:
    """The estimate from the parameter count misses DeepSeek-V3's (its dense layers and MLA
    take a share of it); the catalog's width is what the planner uses."""
    assert derived_expert_intermediate_size(_without_width("DeepSeek-V3")) != 2048
    assert model_shape(MODELS["DeepSeek-V3"], 2).expert_intermediate_size == 2048


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
@pytest.mark.parametrize("name", list(VENDORED))
def test_without_the_width_the_derived_one_gives_the_config_workspace(name: str, tp: int) -> None:
    """An architecture without experts.intermediateSize: the derived width may miss, but the
    workspace it gives stays within 1% of the one config.json's width gives."""
    model = _without_width(name)
    assert model.experts is not None
    true = triton_workspace_elements(1, model.experts.experts_per_token,
                                     expert_width(CONFIGS / f"{VENDORED[name]}.config.json"), model.hidden_size, tp)
    shape = model_shape(model, 2)
    assert shape.expert_intermediate_size == derived_expert_intermediate_size(model)
    assert moe_workspace_per_token(shape, tp) == pytest.approx(true, rel=0.01)


def test_forward_peak_of_qwen3_30b_a3b() -> None:
    """16,384 batched tokens over 8 sequences, eager (no compile): the forward pass, not the
    sampler, is the peak: residual + normed input + the two workspaces (8 experts x (2048 + 2048))
    in bfloat16."""
    planned = plan(CapacityInputs(model=MODELS["Qwen3-30B-A3B"], gpu=GPUS["H100-80GB"], max_num_batched_tokens=16384,
                                  max_num_seqs=8, enforce_eager=True))
    elements = 16384 * 2 * 2048 + triton_workspace_elements(16384, 8, 768, 2048, 1)
    assert planned.activation_gib == pytest.approx(elements * 2 / GIB)
    assert any("TritonExperts.workspace_shapes" in t.source for t in planned.memory_terms)


def test_dense_models_keep_their_mlp_term() -> None:
    shape = model_shape(MODELS["Qwen3-8B"], 2)
    assert shape.experts_per_token == 0 and moe_workspace_per_token(shape, 1) == 0


# tests/fixtures/startup_logs/lukejyk-qwen3-coder-30b-a3b-a100.yaml (a v0.26 development build,
# out of the corpus's scope) prints its breakdown: "0.23 GiB for peak activation". The dense
# formula over config.json's intermediate_size 6144 (a width no layer of this model has) gives
# 0.09 GiB; the workspaces of 8 routed experts of width 768 bring it to 0.14 GiB.
def test_public_moe_breakdown_is_closer() -> None:
    case = yaml.safe_load((FIXTURES / "startup_logs" / "lukejyk-qwen3-coder-30b-a3b-a100.yaml").read_text())
    dense = msgspec.structs.replace(case_inputs(case), compile_cache_warm=True)  # the workspaces, no compile
    moe = msgspec.structs.replace(dense, model=msgspec.structs.replace(dense.model, experts_per_token=8,
                                                               expert_intermediate_size=768))
    logged = float(case["logged"]["activation_gib"])

    def activation(inputs: MemoryInputs) -> float:
        estimate = estimate_available_memory(inputs)
        return next(t.gib for t in estimate.terms if t.name == "activation_peak")

    assert abs(activation(moe) - logged) < abs(activation(dense) - logged)
    # v0.26 keeps the workspaces (2,048 tokens x 8 x (2,048 + 2,048) bf16) in its workspace
    # manager while FlashInfer samples 16 rows (x 151,936 x 14 B) beside the hidden states
    kept = 2048 * 8 * 4096 * 2 + 16 * 151936 * 14 + 2048 * 2048 * 2
    assert activation(moe) == pytest.approx(kept / 2**30, rel=1e-3)


def test_derived_width_of_qwen3_30b_a3b_by_hand() -> None:
    """Qwen3-30B-A3B (30.53B parameters; vendored config.json: hidden 2048, 48 layers, vocab
    151936, 32 heads, 4 KV heads, head_dim 128, 128 experts, moe_intermediate_size 768):
    embeddings + lm_head = 2 x 151936 x 2048 = 622,329,856;
    per layer = (30,530,000,000 - 622,329,856) / 48 = 623,076,461.3;
    attention = 2048 x 128 x (2 x 32 + 2 x 4) = 18,874,368 (q, o, k, v);
    width = (623,076,461.3 - 18,874,368) / (3 x 2048 x 128) = 768.3 -> 768, the config's."""
    assert expert_width(CONFIGS / "Qwen--Qwen3-30B-A3B.config.json") == 768
    assert model_shape(_without_width("Qwen3-30B-A3B"), 2).expert_intermediate_size == 768
