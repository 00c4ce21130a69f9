"""The model catalog is what the models' published config.json files say, and every entry is a
model vLLM could load: shapes that agree with each other, a source, weights that fit the count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.paths import FIXTURES
from vllm_serving.catalog.hf_config import parse_hf_config
from vllm_serving.catalog.models import CATALOG, MODELS, CatalogEntry, find_model

CONFIGS = Path(__file__).parent / "configs"
HF = FIXTURES / "hf"

# Catalog entry -> the stored config.json it is read from, and the facts that legitimately differ
# (the FP8 releases share their BF16 sibling's config but for the quantization; Qwen3.6-27B is
# checked against NVIDIA's NVFP4 quantization of it).
FROM_CONFIG: dict[str, tuple[Path, frozenset[str]]] = {
    "Qwen3-0.6B": (CONFIGS / "Qwen--Qwen3-0.6B.config.json", frozenset()),
    "Qwen3-4B": (HF / "qwen3-4b.config.json", frozenset()),
    "Qwen3-8B": (CONFIGS / "Qwen--Qwen3-8B.config.json", frozenset()),
    "Qwen3-32B": (CONFIGS / "Qwen--Qwen3-32B.config.json", frozenset()),
    "Qwen3-32B-FP8": (CONFIGS / "Qwen--Qwen3-32B-FP8.config.json", frozenset()),
    "Qwen3-30B-A3B": (CONFIGS / "Qwen--Qwen3-30B-A3B.config.json", frozenset()),
    "Qwen3-30B-A3B-FP8": (CONFIGS / "Qwen--Qwen3-30B-A3B-FP8.config.json", frozenset()),
    "Qwen3-235B-A22B": (CONFIGS / "Qwen--Qwen3-235B-A22B.config.json", frozenset()),
    "Qwen3-235B-A22B-FP8": (CONFIGS / "Qwen--Qwen3-235B-A22B-FP8.config.json", frozenset()),
    "Qwen3-Next-80B-A3B-Thinking": (CONFIGS / "Qwen--Qwen3-Next-80B-A3B-Thinking.config.json", frozenset()),
    "Qwen3.5-27B": (HF / "qwen3.5-27b.config.json", frozenset()),
    "Qwen3.5-27B-FP8": (HF / "qwen3.5-27b.config.json", frozenset({"quantization"})),
    "Qwen3.5-35B-A3B": (CONFIGS / "Qwen--Qwen3.5-35B-A3B.config.json", frozenset()),
    "Qwen3.5-122B-A10B": (CONFIGS / "Qwen--Qwen3.5-122B-A10B.config.json", frozenset()),
    "Qwen3.5-397B-A17B": (CONFIGS / "Qwen--Qwen3.5-397B-A17B.config.json", frozenset()),
    "Qwen3.6-27B": (CONFIGS / "nvidia--Qwen3.6-27B-NVFP4.config.json", frozenset({"quantization"})),
    "Qwen3.6-27B-FP8": (CONFIGS / "nvidia--Qwen3.6-27B-NVFP4.config.json", frozenset({"quantization"})),
    "Qwen3.6-35B-A3B": (CONFIGS / "Qwen--Qwen3.6-35B-A3B.config.json", frozenset()),
    "Llama-3.1-8B": (CONFIGS / "meta-llama--Meta-Llama-3.1-8B.config.json", frozenset()),
    "Llama-3.1-70B": (CONFIGS / "meta-llama--Meta-Llama-3.1-70B.config.json", frozenset()),
    "Llama-3.1-405B": (CONFIGS / "meta-llama--Meta-Llama-3.1-405B.config.json", frozenset()),
    "Llama-3.3-70B-Instruct": (CONFIGS / "meta-llama--Llama-3.3-70B-Instruct.config.json", frozenset()),
    "gpt-oss-20b": (CONFIGS / "openai--gpt-oss-20b.config.json", frozenset()),
    "gpt-oss-120b": (CONFIGS / "openai--gpt-oss-120b.config.json", frozenset()),
    "DeepSeek-V3": (CONFIGS / "deepseek-ai--DeepSeek-V3.config.json", frozenset()),
    "DeepSeek-R1": (CONFIGS / "deepseek-ai--DeepSeek-R1.config.json", frozenset()),
}
# Facts a config.json states (the rest - size, vLLM release - is the catalog's own, with notes).
STATED = ("architecture", "model_type", "family", "weights_dtype", "quantization", "num_hidden_layers",
          "hidden_size", "intermediate_size", "vocab_size", "max_position_embeddings", "num_attention_heads",
          "num_key_value_heads", "head_dim", "full_attention_layers", "linear_attention", "mla",
          "sliding_window", "sliding_window_layers", "experts", "mtp_layers", "refuses_float16",
          "tie_word_embeddings", "attention_output_gate", "partial_rotary_factor", "multimodal_rope",
          "vision_params_billion", "rope_scaling", "quantization_config")
# Families the catalog must cover: what people serve with vLLM (dense, MoE, MLA, hybrid).
REQUIRED = ("Qwen3-0.6B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "Qwen3-32B", "Qwen3-30B-A3B",
            "Qwen3-235B-A22B", "Qwen3.5-27B", "Qwen3.6-27B", "Llama-3.1-8B", "Llama-3.1-70B",
            "Llama-3.1-405B", "Llama-3.3-70B-Instruct", "Mistral-Small-3.1-24B-Instruct-2503",
            "gemma-3-4b-it", "gemma-3-12b-it", "gemma-3-27b-it", "gpt-oss-20b", "gpt-oss-120b",
            "DeepSeek-V3", "DeepSeek-R1")


def _config(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", sorted(FROM_CONFIG))
def test_entry_states_what_its_config_json_says(name: str) -> None:
    path, differs = FROM_CONFIG[name]
    parsed = parse_hf_config(_config(path), path.name)
    entry = MODELS[name]
    assert {f: getattr(entry, f) for f in STATED if f not in differs} == \
           {f: getattr(parsed, f) for f in STATED if f not in differs}
    # the count estimated from the shapes, or the published total where a vision tower adds to it
    assert parsed.params_billion * 0.995 <= entry.params_billion <= parsed.params_billion * 1.05


def test_every_stored_config_is_used() -> None:
    used = {path.name for path, _ in FROM_CONFIG.values()}
    assert sorted(p.name for p in CONFIGS.glob("*.json") if p.name not in used) == []


@pytest.mark.parametrize("name", REQUIRED)
def test_catalog_covers_the_models_people_serve(name: str) -> None:
    assert find_model(name) is not None


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_entry_is_internally_consistent(name: str) -> None:
    m: CatalogEntry = CATALOG[name]
    linear = m.linear_attention.num_layers if m.linear_attention else 0
    assert m.full_attention_layers + linear == m.num_hidden_layers
    assert m.num_attention_heads % m.num_key_value_heads == 0
    assert m.sliding_window_layers <= m.full_attention_layers
    assert (m.sliding_window is None) == (m.sliding_window_layers == 0)
    if m.mla is None:  # query width near the model width (Qwen3.5-122B's is 2.7x; MLA's is wider)
        assert m.hidden_size / 2 <= m.head_dim * m.num_attention_heads <= m.hidden_size * 3
    else:
        assert m.head_dim == m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim
    if m.experts is not None:
        assert m.experts.experts_per_token <= m.experts.num_experts
    # 0.5 to 4 bytes a parameter: a weights figure that contradicts the count is a typo
    assert 0.5 <= m.total_weights_gib * 2**30 / (m.params_billion * 1e9) <= 4


@pytest.mark.parametrize("name", sorted(n for n, m in CATALOG.items() if m.experts is not None))
def test_moe_entry_keeps_its_expert_width(name: str) -> None:
    """The width vLLM builds each routed expert with: config.json's moe_intermediate_size, or
    intermediate_size where the experts are the MLP (gpt-oss)."""
    path, _ = FROM_CONFIG[name]
    config = _config(path)
    text = config.get("text_config") or config
    experts = MODELS[name].experts
    assert experts is not None
    assert experts.intermediate_size == (text.get("moe_intermediate_size") or text["intermediate_size"])


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_entry_cites_its_config_json(name: str) -> None:
    """The source is the config.json of the Hugging Face repository the entry is named after."""
    repo = CATALOG[name].source.removeprefix("https://huggingface.co/").removesuffix("/blob/main/config.json")
    assert repo.split("/")[1].lower() == name.lower()


def test_catalog_facts_resolve_as_inline_architectures() -> None:
    """An entry's facts, pasted under model.architecture, describe the same model."""
    for name, entry in CATALOG.items():
        assert entry.architecture_facts() == MODELS[name]
