"""parallelism.py at its boundaries: head divisibility, GPUs given and on the host, context length."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary
from vllm_serving.catalog.models import MODELS, LinearAttention, RopeScaling

QWEN = MODELS["Qwen3.5-27B"]
assert QWEN.linear_attention is not None


def linear(value_heads: int) -> dict[str, object]:
    lin = LinearAttention(**{**QWEN.linear_attention.model_dump(), "num_value_heads": value_heads})
    return {"name": None, "architecture": QWEN.model_copy(update={"linear_attention": lin})}


def tp(size: int, count: int = 8, pp: int | None = None) -> dict[str, object]:
    return {"hardware": {"count": count, "device_ids": None},
            "engine": {"tensor_parallel_size": size, "pipeline_parallel_size": pp}}


ROPE = ("--hf-overrides", '{"text_config": {"rope_parameters": {"rope_type": "yarn", "factor": 2.0, '
        '"original_max_position_embeddings": 262144}}}')
TOP_ROPE = ("--hf-overrides", '{"rope_parameters": {"rope_type": "yarn", "factor": 2.0, '
            '"original_max_position_embeddings": 262144}}')
LONG = 262144 + 1
QWEN3 = {"name": "Qwen3-32B"}
QWEN3_YARN = {"name": None, "architecture": MODELS["Qwen3-32B"].model_copy(update={"rope_scaling": (
    RopeScaling(rope_type="yarn", factor=4.0, original_max_position_embeddings=32768),)})}
YARN = ("--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, '
        '"original_max_position_embeddings": 32768}}')
THETA = ("--hf-overrides", '{"rope_theta": 4000000}')

BOUNDARIES = [
    Boundary("tp-heads-indivisible", "v100", tp(5), tp(6), "24 heads: TP 5 -> 6", says=("1, 2, 4, 8",)),
    Boundary("tp-heads-indivisible", "v100", tp(16, count=16), tp(12, count=16), "24 heads: TP 16 -> 12"),
    Boundary("tp-kv-heads-indivisible", "v100", tp(3), tp(4), "4 KV heads: TP 3 -> 4 (split)"),
    Boundary("tp-kv-heads-indivisible", "v100", tp(6), tp(8), "4 KV heads: TP 6 -> 8 (replicated twice)"),
    Boundary("tp-kv-heads-indivisible", "v100", tp(3), tp(2), "4 KV heads: TP 3 -> 2"),
    Boundary("tp-kv-heads-indivisible", "v100", tp(3, count=16), tp(4, count=16),
             "16 GPUs: TP 12 would split heads and KV heads but not the 16 linear key heads",
             fix="set engine.tensorParallelSize to one of 1, 2, 4, 8"),
    Boundary("tp-kv-heads-indivisible", "v100", tp(3, count=7), tp(4, count=7), "7 GPUs: sizes up to 7",
             fix="set engine.tensorParallelSize to one of 1, 2, 4"),
    Boundary("tp-linear-heads-indivisible", "v100", tp(3), tp(4), "16 key / 48 value heads: TP 3 -> 4",
             says=("linear-attention 16 key heads", "1, 2, 4, 8")),
    Boundary("tp-linear-heads-indivisible", "v100", tp(5), tp(4), "TP 5 -> 4", says=("16 key and 48 value",)),
    Boundary("tp-linear-heads-indivisible", "v100", {**tp(8), "model": linear(12)}, {**tp(8), "model": linear(16)},
             "TP 8: 12 value heads -> 16", says=("12 value",)),
    Boundary("parallel-exceeds-gpus", "a100", {"hardware": {"device_ids": (6, 7, 8)}},
             {"hardware": {"device_ids": (5, 6, 7, 8)}}, "TP 4 on 3 device ids -> 4",
             says=("TP 4 x PP 1 needs 4 GPUs but the container gets 3 - give the container 4 GPUs",)),
    Boundary("parallel-exceeds-gpus", "v100", {**tp(4, count=8, pp=2), "hardware": {"device_ids": (0, 1, 2, 3)}},
             {**tp(4, count=8, pp=1), "hardware": {"device_ids": (0, 1, 2, 3)}}, "4 GPUs: TP 4 x PP 2 -> PP 1"),
    Boundary("parallel-gpus-idle", "a100", {"hardware": {"device_ids": (5, 6, 7, 8, 9)}},
             {"hardware": {"device_ids": (6, 7, 8, 9)}}, "TP 4 on 5 device ids -> 4"),
    Boundary("parallel-gpus-idle", "a100-k8s", {"target": {"kind": "docker"}}, {},
             "8 GPUs per node, TP 4: Docker (all 8 given) -> Kubernetes (the pod asks 4)", says=("4 stay idle",)),
    Boundary("parallel-exceeds-host", "v100", tp(16), tp(16, count=16), "TP 16 on 8 GPUs -> on 16"),
    Boundary("parallel-exceeds-host", "v100", tp(8, pp=2), tp(8, pp=1), "8 GPUs: TP 8 x PP 2 -> PP 1"),
    # the fix spells the YaRN override that stretches 262,144 trained positions far enough: factor
    # ceil(262145 / 262144) = 2, under text_config for a multimodal model
    Boundary("max-model-len-exceeds-model", "a100", {"engine": {"max_model_len": LONG}},
             {"engine": {"max_model_len": LONG - 1}}, "262145 -> 262144 tokens",
             says=('{"text_config": {"rope_scaling": {"rope_type": "yarn", "factor": 2, '
                   '"original_max_position_embeddings": 262144}}}',)),
    Boundary("max-model-len-exceeds-model", "a100", {"engine": {"max_model_len": LONG}},
             {"engine": {"max_model_len": -1}}, "262145 -> -1 (vLLM fits it)"),
    # Qwen3.6 is multimodal: overrides reach its language model only under text_config
    Boundary("max-model-len-exceeds-model", "a100", {"engine": {"max_model_len": 300_000}},
             {"engine": {"max_model_len": 300_000, "extra_args": ROPE}},
             "+ --hf-overrides text_config.rope_parameters"),
    Boundary("max-model-len-exceeds-model", "a100", {"engine": {"max_model_len": 300_000, "extra_args": TOP_ROPE}},
             {"engine": {"max_model_len": 300_000, "extra_args": ROPE}},
             "a multimodal model: top-level rope_parameters -> under text_config", says=('"text_config"',)),
    Boundary("max-model-len-exceeds-model", "a100", {"engine": {"max_model_len": 300_000, "extra_args": (
             "--enforce-eager", "--hf-overrides")}},
             {"engine": {"max_model_len": 300_000, "extra_args": ("--enforce-eager", *ROPE)}},
             "--hf-overrides with no value -> with rope_parameters, after another flag"),
    Boundary("max-model-len-exceeds-model", "a100",
             {"engine": {"max_model_len": 300_000, "extra_args": (
                 "--hf-overrides.text_config.rope_parameters.rope_theta", "20000000")}},
             {"engine": {"max_model_len": 300_000, "extra_args": ("--hf-overrides.text_config.rope_parameters.factor",
                                                                  "2.0")}},
             "a dotted rope_theta (stretches nothing) -> a dotted factor (merged into the default rope: x2)"),
    Boundary("max-model-len-exceeds-model", "a100",
             {"engine": {"max_model_len": 300_000, "extra_args": ("--rope-scaling", '{"factor": 2.0}')}},
             {"engine": {"max_model_len": 300_000, "extra_args": (f"--hf-overrides={ROPE[1]}",)}},
             "--rope-scaling (no such flag in v0.19.1) -> --hf-overrides=..."),
    Boundary("max-model-len-exceeds-model", "a100",
             {"engine": {"max_model_len": 300_000, "env": {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "0"}}},
             {"engine": {"max_model_len": 300_000, "env": {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}}},
             "VLLM_ALLOW_LONG_MAX_MODEL_LEN 0 -> 1"),
    Boundary("max-model-len-exceeds-model", "a100",
             {"engine": {"max_model_len": 300_000, "env": {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "yes"}}},
             {"engine": {"max_model_len": 300_000, "env": {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": " True "}}},
             "VLLM_ALLOW_LONG_MAX_MODEL_LEN yes (not read as on) -> True"),
    # Qwen3-32B (40960 tokens) as its model card extends it: YaRN 4 x 32768
    Boundary("max-model-len-exceeds-model", "a100", {"model": QWEN3_YARN, "engine": {"max_model_len": 131_073}},
             {"model": QWEN3_YARN, "engine": {"max_model_len": 131_072}},
             "config.json rope_scaling YaRN 4 x 32768: 131073 -> 131072", says=("x RoPE factor 4",)),
    Boundary("max-model-len-exceeds-model", "a100", {"model": QWEN3, "engine": {"max_model_len": 131_072}},
             {"model": QWEN3_YARN, "engine": {"max_model_len": 131_072}},
             "131072 tokens: no rope_scaling -> YaRN 4 in the configFile", says=("40960",)),
    Boundary("max-model-len-exceeds-model", "a100",
             {"model": QWEN3, "engine": {"max_model_len": 131_072, "extra_args": THETA}},
             {"model": QWEN3, "engine": {"max_model_len": 131_072, "extra_args": YARN}},
             "--hf-overrides rope_theta alone stretches nothing -> a YaRN rope_scaling"),
    Boundary("max-model-len-exceeds-model", "a100",
             {"model": QWEN3, "engine": {"max_model_len": 131_073, "extra_args": YARN}},
             {"model": QWEN3, "engine": {"max_model_len": 131_072, "extra_args": YARN}},
             "YaRN 4 through --hf-overrides still bounds it: 131073 -> 131072"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)
