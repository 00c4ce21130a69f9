"""Typed views of the registry's schema-2 sections; a schema-1 registry (v0.11.0) knows none of them."""

from __future__ import annotations

from tests.engine.schema_1 import schema_1_release
from vllm_serving.engine import release_facts
from vllm_serving.engine.release_registry import load


def test_pinned_release_views() -> None:
    release = load("0.19.1")
    triton = release_facts.backends(release)["TRITON_ATTN"]
    assert triton.kernels == "triton" and triton.kv_cache_storage == {
        "fp8": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e4m3fn"}
    models = release_facts.models(release)
    assert models.float16_refused is not None and "gemma3" in models.float16_refused
    multimodal = models.multimodal_architectures
    assert multimodal is not None and "Qwen3_5ForConditionalGeneration" in multimodal
    rewrites = release_facts.speculative(release).by_model_type
    assert rewrites is not None and rewrites["qwen3_next"].mtp_model_type == "qwen3_next_mtp"
    # vllm/config/speculative.py (v0.19.1) hf_config_override: LongCat's and Step-3.5's draft read
    # getattr(hf_config, "num_nextn_predict_layers", 1), Qwen3.5's "mtp_num_hidden_layers" with no default
    assert (rewrites["longcat_flash"].n_predict_key, rewrites["longcat_flash"].n_predict_default) == (
        "num_nextn_predict_layers", 1)
    assert rewrites["step3p5"].n_predict_default == 1
    assert (rewrites["qwen3_5"].n_predict_key, rewrites["qwen3_5"].n_predict_default) == ("mtp_num_hidden_layers", None)
    # ... and rewrites NemotronH to its MTP draft only when `num_nextn_predict_layers > 0`; Qwen3.5 always
    assert rewrites["nemotron_h"].requires_positive == "num_nextn_predict_layers"
    assert rewrites["qwen3_5"].requires_positive is None
    assert release_facts.quantization(release).marlin_min_capability == 75
    assert release_facts.performance_modes(release) == {"throughput": {"max_num_batched_tokens": 2, "max_num_seqs": 2}}
    assert release_facts.env_values(release)["VLLM_KV_CACHE_LAYOUT"].choices == ("NHD", "HND")


def test_a_schema_1_registry_states_none_of_the_new_facts() -> None:
    release = schema_1_release()
    assert all(backend.checks is None for backend in release_facts.backends(release).values())
    assert release_facts.selection(release) is None
    assert release_facts.models(release).float16_refused is None
    assert release_facts.speculative(release).by_model_type is None
    assert release_facts.gates(release) == () and release_facts.env_values(release) == {}
