"""Each tensor kind of a checkpoint counted from its config.json, against the layers vLLM builds
for it (vllm/model_executor/models/deepseek_v2.py, qwen2_moe.py, qwen3_next.py, v0.19.1): the
published config's numbers, multiplied out by hand in each test."""

from __future__ import annotations

import json

import pytest

from tests.paths import FIXTURES
from vllm_serving.catalog.checkpoint import (
    checkpoint_bytes,
    derived_expert_intermediate_size,
    derived_intermediate_size,
    element_counts,
)
from vllm_serving.catalog.hf_config import load_hf_config, parse_hf_config
from vllm_serving.catalog.models import MODELS


def test_mla_with_a_compressed_query_is_split_as_deepseek_v2_py_builds_it() -> None:
    """DeepSeek-V3 (hidden 7168, 128 heads, q_lora_rank 1536, kv_lora_rank 512, qk_nope 128,
    qk_rope 64, v_head 128; 61 layers): q_a_proj (7168 -> 1536) and kv_a_proj_with_mqa
    (7168 -> 512 + 64) are ReplicatedLinear, whole on every rank; q_b_proj (1536 -> 128 x 192),
    kv_b_proj (512 -> 128 x (128 + 128)) and o_proj (128 x 128 -> 7168) are split by heads. No
    separate K/V projections."""
    counts = element_counts(MODELS["DeepSeek-V3"])
    assert counts["attention_replicated"] == 61 * (7168 * 1536 + 7168 * 576)
    assert counts["attention_qo"] == 61 * (1536 * 128 * 192 + 512 * 128 * 256 + 128 * 128 * 7168)
    assert counts["attention_kv"] == 0


def test_mla_without_a_compressed_query_projects_it_whole() -> None:
    """DeepSeek-V2-Lite (q_lora_rank null; hidden 2048, 16 heads, 27 layers): q_proj is one
    ColumnParallelLinear 2048 -> 16 x 192; only kv_a_proj_with_mqa is replicated."""
    counts = element_counts(load_hf_config(FIXTURES / "hf" / "deepseek-v2-lite-chat.config.json"))
    assert counts["attention_replicated"] == 27 * 2048 * 576
    assert counts["attention_qo"] == 27 * (2048 * 16 * 192 + 512 * 16 * 256 + 16 * 128 * 2048)


def test_deepseek_dense_layers_routed_and_shared_experts() -> None:
    """DeepSeek-V3: the first 3 layers (first_k_dense_replace) are dense MLPs of intermediate_size
    18432; the other 58 hold 256 routed experts and one shared expert of moe_intermediate_size
    2048 each (DeepseekV2MoE: shared width moe_intermediate_size x n_shared_experts)."""
    counts = element_counts(MODELS["DeepSeek-V3"])
    assert counts["mlp"] == 3 * 3 * 7168 * 18432
    assert counts["experts"] == 58 * 256 * 3 * 7168 * 2048
    assert counts["shared_expert"] == 58 * 1 * 3 * 7168 * 2048
    # the gate is hidden x 256 plus a 256-wide e_score_correction_bias (topk_method noaux_tc);
    # the count charges one hidden row for a shared-expert gate DeepSeek lacks: 0.4% of the router
    assert counts["router"] == pytest.approx(58 * (7168 * 256 + 256), rel=5e-3)


def test_qwen_moe_routers_include_the_shared_expert_gate() -> None:
    """Qwen3-Next-80B-A3B (hidden 2048, 48 layers, all MoE): gate hidden -> 512 experts and
    shared_expert_gate hidden -> 1, both ReplicatedLinear and never quantized (qwen3_next.py);
    experts and the shared expert of 512 wide each."""
    counts = element_counts(MODELS["Qwen3-Next-80B-A3B-Thinking"])
    assert counts["router"] == 48 * 2048 * (512 + 1)
    assert counts["experts"] == 48 * 512 * 3 * 2048 * 512
    assert counts["shared_expert"] == 48 * 3 * 2048 * 512
    assert counts["mlp"] == 0


QWEN2_57B = FIXTURES / "hf" / "qwen2-57b-a14b.config.json"


def test_a_shared_expert_wider_than_the_routed_ones_is_sized_by_its_own_width() -> None:
    """Qwen2-57B-A14B: 64 routed experts 2560 wide, one shared expert 20480 wide (qwen2_moe.py
    builds shared_expert with shared_expert_intermediate_size), 28 layers of hidden 3584."""
    model = load_hf_config(QWEN2_57B)
    assert model.experts is not None
    assert (model.experts.intermediate_size, model.experts.shared_intermediate_size) == (2560, 20480)
    assert model.experts.shared_experts == 1
    counts = element_counts(model)
    assert counts["shared_expert"] == 28 * 3 * 3584 * 20480
    assert counts["experts"] == 28 * 64 * 3 * 3584 * 2560
    assert counts["router"] == 28 * 3584 * (64 + 1)


def test_qwen2_57b_a14b_counts_57_billion_parameters() -> None:
    """The name's 57B, by hand: embeddings and head 2 x 151936 x 3584 = 1.09 B; attention
    28 x (2 x 3584^2 + 2 x 3584 x 4 x 128) = 0.82 B; routed experts 28 x 64 x 3 x 3584 x 2560 =
    49.33 B; shared experts 28 x 3 x 3584 x 20480 = 6.17 B; routers 28 x 3584 x 65 = 0.01 B."""
    by_hand = (2 * 151936 * 3584 + 28 * (2 * 3584**2 + 2 * 3584 * 4 * 128) + 28 * 64 * 3 * 3584 * 2560
               + 28 * 3 * 3584 * 20480 + 28 * 3584 * 65) / 1e9
    assert by_hand == pytest.approx(57.4, abs=0.05)
    assert load_hf_config(QWEN2_57B).params_billion == pytest.approx(by_hand, abs=0.01)


def test_deepseek_v2_lite_shared_experts_are_n_shared_times_the_routed_width() -> None:
    """n_shared_experts 2 of moe_intermediate_size 1408: DeepseekV2MLP(intermediate_size=1408 x 2)."""
    model = load_hf_config(FIXTURES / "hf" / "deepseek-v2-lite-chat.config.json")
    assert model.experts is not None
    assert (model.experts.shared_experts, model.experts.shared_intermediate_size) == (2, 2816)
    assert model.experts.dense_layers == 1  # first_k_dense_replace
    assert element_counts(model)["shared_expert"] == 26 * 3 * 2048 * 2816


def test_the_source_of_a_shape_count_names_its_packing() -> None:
    """The capacity summary's weights line says where the figure comes from."""
    assert "16-bit packing" in checkpoint_bytes(MODELS["Qwen3-8B"]).source
    assert "fp8 packing" in checkpoint_bytes(MODELS["Qwen3-32B-FP8"]).source



def test_dense_attention_is_query_output_and_key_value_projections() -> None:
    """Qwen3-8B (hidden 4096, 32 heads of 128, 8 KV heads, 36 layers): q_proj and o_proj
    4096 x 4096 each, k_proj and v_proj 4096 x 1024 each, a layer."""
    counts = element_counts(MODELS["Qwen3-8B"])
    assert counts["attention_qo"] == 36 * (4096 * 4096 + 4096 * 4096)
    assert counts["attention_kv"] == 36 * 2 * 4096 * 8 * 128
    assert counts["attention_replicated"] == 0


def test_a_moe_without_a_shared_expert_has_no_shared_gate() -> None:
    """Qwen3-30B-A3B: 48 layers of a 2048 -> 128 router alone (qwen3_moe.py: no shared expert)."""
    counts = element_counts(MODELS["Qwen3-30B-A3B"])
    assert counts["router"] == 48 * 2048 * 128
    assert counts["shared_expert"] == 0


@pytest.mark.parametrize(("config", "published"), [
    ("catalog/configs/deepseek-ai--DeepSeek-V3.config.json", 671),  # the V3 report: 671 B, MTP module aside
    ("fixtures/hf/deepseek-v2-lite-chat.config.json", 15.7),  # the model card: 15.7 B total
])
def test_mla_models_count_their_published_parameters(config: str, published: float) -> None:
    assert load_hf_config(FIXTURES.parent / config).params_billion == pytest.approx(published, rel=1e-3)


def test_qwen3_30b_a3b_parameters_by_hand() -> None:
    """Embeddings and head 2 x 151936 x 2048; 48 layers of attention (2 x 2048 x 4096 + 2 x 2048 x
    512), 128 experts of 3 x 2048 x 768 and a 2048 x 128 router: 30.53 B (the card: 30.5 B)."""
    by_hand = (2 * 151936 * 2048 + 48 * (2 * 2048 * 4096 + 2 * 2048 * 512 + 128 * 3 * 2048 * 768 + 2048 * 128)) / 1e9
    model = load_hf_config(FIXTURES.parent / "catalog" / "configs" / "Qwen--Qwen3-30B-A3B.config.json")
    assert model.params_billion == pytest.approx(by_hand, abs=0.005)


def test_mlp_only_layers_are_dense_mlps_of_intermediate_size() -> None:
    """qwen3_moe.py: a layer listed in mlp_only_layers gets Qwen3MoeMLP(config.intermediate_size)
    instead of experts. Qwen3-30B-A3B with layers 0 and 1 so listed: two layers trade 128 experts
    of 768 and their router for one 6144-wide MLP."""
    path = FIXTURES.parent / "catalog" / "configs" / "Qwen--Qwen3-30B-A3B.config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    base = parse_hf_config(config, "config.json")
    two_dense = parse_hf_config(config | {"mlp_only_layers": [0, 1]}, "config.json")
    assert two_dense.experts is not None and two_dense.experts.dense_layers == 2
    moved = 2 * (128 * 3 * 2048 * 768 + 2048 * 128 - 3 * 2048 * 6144) / 1e9
    assert two_dense.params_billion == pytest.approx(base.params_billion - moved, abs=0.01)
    counts = element_counts(two_dense)
    assert counts["mlp"] == 2 * 3 * 2048 * 6144
    assert counts["experts"] == 46 * 128 * 3 * 2048 * 768


@pytest.mark.parametrize("name", ["Qwen3-8B", "Qwen3-14B", "Qwen3-32B", "Llama-3.1-8B", "Llama-3.1-70B",
                                  "Llama-3.1-405B"])
def test_an_mlp_width_left_out_is_recovered_from_the_parameter_count(name: str) -> None:
    """An inline architecture without intermediateSize: the width its parameter count leaves for
    the MLPs is the published intermediate_size (within 0.1%), and the MLPs are counted with it."""
    published = MODELS[name]
    assert published.intermediate_size is not None
    inline = published.model_copy(update={"intermediate_size": None})
    width = derived_intermediate_size(inline)
    assert width == pytest.approx(published.intermediate_size, rel=1e-3)
    assert element_counts(inline)["mlp"] == published.num_hidden_layers * 3 * published.hidden_size * width


def test_a_derived_mlp_width_stays_between_hidden_and_six_times_it() -> None:
    qwen = MODELS["Qwen3-8B"].model_copy(update={"intermediate_size": None})
    assert derived_intermediate_size(qwen.model_copy(update={"params_billion": 1.3})) == 4096
    assert derived_intermediate_size(qwen.model_copy(update={"params_billion": 80.0})) == 6 * 4096


def test_gated_deltanet_layers_are_the_tensors_vllm_builds() -> None:
    """Qwen3.5-27B (hidden 5120; 48 Gated DeltaNet layers of 16 key heads and 48 value heads of
    128, conv kernel 4), as layers/mamba/gdn_linear_attn.py (v0.19.1) builds a layer: in_proj_qkvz
    5120 -> 2 x 2048 + 2 x 6144 and out_proj 6144 -> 5120 are the split projections; in_proj_ba
    5120 -> 2 x 48, conv1d 10240 x 4 (q, k and v channels, no bias), A_log 48, dt_bias 48 and the
    gated norm 128 (head_v_dim) are the small tensors."""
    counts = element_counts(MODELS["Qwen3.5-27B"])
    assert counts["linear_attention_proj"] == 48 * (5120 * (2 * 2048 + 2 * 6144) + 6144 * 5120)
    assert counts["linear_attention_small"] == 48 * (5120 * 2 * 48 + 10240 * 4 + 48 + 48 + 128)


def test_qwen3_5_mtp_layer_is_one_decoder_layer_its_fc_and_five_norms() -> None:
    """Qwen3.5-27B's draft (qwen3_5_mtp.py, v0.19.1): fc 2 x 5120 -> 5120; one full-attention
    Qwen3_5DecoderLayer (q_proj 5120 -> 24 x 256 x 2 with its output gate, k_proj and v_proj
    5120 -> 4 x 256, o_proj 24 x 256 -> 5120, an MLP of 3 x 5120 x 17408); norm, pre_fc_norm_hidden,
    pre_fc_norm_embedding and the layer's two norms, 5120 each. Its embedding and head are the
    served model's. Only the q/k norms (2 x 256) are left out, as in every layer's count."""
    attention = 5120 * 24 * 256 * 2 + 2 * 5120 * 4 * 256 + 24 * 256 * 5120
    by_hand = 2 * 5120 * 5120 + attention + 3 * 5120 * 17408 + 5 * 5120 + 2 * 256
    assert element_counts(MODELS["Qwen3.5-27B"])["mtp"] == pytest.approx(by_hand, abs=2 * 256)


def test_deepseek_mtp_layer_is_a_moe_layer() -> None:
    """DeepSeek-V3's next-n layer is layer 61, past first_k_dense_replace (3): DeepseekV2DecoderLayer
    builds it with the 256 routed experts of 2048 and the shared one, not the dense 18432 MLP
    (deepseek_v2.py, deepseek_mtp.py, v0.19.1); with MLA as in every layer, eh_proj 2 x 7168 ->
    7168 and five norms (enorm, hnorm, shared_head.norm, the layer's two). Left out, under 1e-5:
    the MLA norms (1536 + 512) and the gate's bias against the shared-expert row counted."""
    attention = 7168 * (1536 + 576) + 1536 * 128 * 192 + 512 * 128 * 256 + 128 * 128 * 7168
    moe = 256 * 3 * 7168 * 2048 + 3 * 7168 * 2048 + 7168 * 256
    by_hand = attention + moe + 2 * 7168 * 7168 + 5 * 7168
    assert element_counts(MODELS["DeepSeek-V3"])["mtp"] == pytest.approx(by_hand, rel=1e-5)


@pytest.mark.parametrize(("name", "params"), [
    ("Qwen3-30B-A3B", 30.53e9),  # Qwen/Qwen3-30B-A3B model card: 30.5B parameters, 3.3B activated
    ("Qwen3-235B-A22B", 235e9),  # Qwen/Qwen3-235B-A22B model card: 235B parameters, 22B activated
    ("gpt-oss-20b", 21e9),  # openai/gpt-oss-20b model card: 21B parameters, 3.6B active
])
def test_an_inline_moe_without_expert_widths_still_counts_its_experts(name: str, params: float) -> None:
    # a stack may describe a MoE inline with neither experts.intermediateSize nor intermediateSize; its
    # experts hold nearly every parameter, so the checkpoint must still weigh about parameters x 2 bytes
    model = MODELS[name]
    assert model.experts is not None
    bare = model.model_copy(update={"intermediate_size": None, "quantization": None,
                                    "experts": model.experts.model_copy(update={"intermediate_size": None})})
    assert checkpoint_bytes(bare).loaded_total() == pytest.approx(params * 2, rel=0.03)


def test_the_derived_expert_width_of_qwen3_30b_a3b_by_hand() -> None:
    """Qwen3-30B-A3B (30.53B parameters; hidden 2048, 48 layers, vocab 151936, 32 heads, 4 KV heads,
    head_dim 128, 128 experts, moe_intermediate_size 768 in its config.json):
    embeddings + lm_head = 2 x 151936 x 2048 = 622,329,856;
    per layer = (30,530,000,000 - 622,329,856) / 48 = 623,076,461.3;
    attention = 2048 x 128 x (2 x 32 + 2 x 4) = 18,874,368 (q, o, k, v);
    width = (623,076,461.3 - 18,874,368) / (3 x 2048 x 128) = 768.3 -> 768, the config's."""
    assert derived_expert_intermediate_size(MODELS["Qwen3-30B-A3B"]) == 768
    assert derived_expert_intermediate_size(MODELS["Qwen3-8B"]) == 0  # dense: no experts


def test_the_derived_expert_width_shares_the_layer_with_the_shared_expert() -> None:
    """Qwen3-Next-80B-A3B (79.57B; hidden 2048, 48 layers, vocab 151936, 16 heads, 2 KV heads, head_dim
    256, 512 routed experts and 1 shared, moe_intermediate_size 512):
    per layer = (79,570,000,000 - 2 x 151936 x 2048) / 48 = 1,644,743,128;
    attention = 2048 x 256 x (2 x 16 + 2 x 2) = 18,874,368;
    width = (1,644,743,128 - 18,874,368) / (3 x 2048 x (512 + 1)) = 515.8 -> 516 (517 without the shared
    expert); its linear-attention layers are counted as attention, hence a little over the config's 512."""
    assert derived_expert_intermediate_size(MODELS["Qwen3-Next-80B-A3B-Thinking"]) == 516
