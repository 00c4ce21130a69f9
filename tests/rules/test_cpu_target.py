"""cpu_target.py at its boundaries: the image's build, the CPU KV cache, GPU-only flags on a CPU target.

The `local` stack (hardware.device: cpu) is the passing twin; each case adds the one GPU-only
setting the rule refuses, with the key and the fix it names.
"""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, codes
from tests.stack_builders import shipped_settings, spec_of
from vllm_serving import rules
from vllm_serving.rules.base import Context
from vllm_serving.rules.cpu_target import GPU_ONLY, applicable
from vllm_serving.settings.engine import SpeculativeSettings

KV_ENV = "VLLM_CPU_KVCACHE_SPACE"
ON_GPU = {"hardware": {"device": "gpu", "gpu": "A100-80GB"}}

BOUNDARIES = [
    Boundary("image-device-mismatch", "local", {"image": {"repository": "vllm/vllm-openai"}}, {},
             "CPU target: vllm/vllm-openai -> vllm/vllm-openai-cpu",
             says=("a cpu target", "Failed to infer device type", "image.repository: vllm/vllm-openai-cpu")),
    Boundary("image-device-mismatch", "v100", {"image": {"repository": "vllm/vllm-openai-cpu"}}, {},
             "GPU target: vllm/vllm-openai-cpu -> vllm/vllm-openai",
             says=("a gpu target", "GPUs idle", "hardware.device: cpu")),
    Boundary("image-device-mismatch", "local", {"image": {"repository": "vllm/vllm-openai"}},
             {"image": {"repository": "vllm/vllm-openai"}, **ON_GPU},
             "CUDA image: device cpu -> gpu"),
    # a `-cpu` tag marks vLLM's CPU build too, as a mirror of it keeps the repository's name
    # (harbor.example/vllm/vllm-openai:v0.19.1-cpu)
    Boundary("image-device-mismatch", "local", {"image": {"repository": "vllm/vllm-openai", "tag": "v0.19.1"}},
             {"image": {"repository": "vllm/vllm-openai", "tag": "v0.19.1-cpu"}},
             "CPU target: tag v0.19.1 -> v0.19.1-cpu"),
    Boundary("image-device-mismatch", "v100", {"image": {"tag": "v0.19.1-cpu"}}, {"image": {"tag": "v0.19.1"}},
             "GPU target: tag v0.19.1-cpu -> v0.19.1", says=("vLLM's CPU build",)),
    Boundary("cpu-kv-cache-space", "local", {"engine": {"env": {}}}, {"engine": {"env": {KV_ENV: "1"}}},
             "unset -> 1 GiB", says=("unset", 'e.g. "4"')),
    Boundary("cpu-kv-cache-space", "local", {"engine": {"env": {KV_ENV: "0"}}}, {"engine": {"env": {KV_ENV: "1"}}},
             "0 -> 1 GiB", says=("'0'",)),
    Boundary("cpu-kv-cache-space", "local", {"engine": {"env": {KV_ENV: "4.5"}}},
             {"engine": {"env": {KV_ENV: "4"}}}, "4.5 -> 4 (vLLM reads it with int())", says=("'4.5'",)),
    Boundary("cpu-kv-cache-space", "local", {"engine": {"env": {}}}, {"engine": {"env": {}}, **ON_GPU},
             "unset: device cpu -> gpu"),
    Boundary("cpu-gpu-memory-utilization", "local", {"engine": {"gpu_memory_utilization": 0.9}},
             {"engine": {"gpu_memory_utilization": None}}, "0.9 -> unset",
             says=("0.9", "remove engine.gpuMemoryUtilization", "VLLM_CPU_KVCACHE_SPACE")),
    Boundary("cpu-attention-backend", "local", {"engine": {"attention_backend": "FLASHINFER"}},
             {"engine": {"attention_backend": None}}, "FLASHINFER -> unset",
             says=("FLASHINFER", "CPU_ATTN"), fix="remove engine.attentionBackend"),
    Boundary("cpu-fp8-kv-cache", "local", {"engine": {"kv_cache_dtype": "fp8"}},
             {"engine": {"kv_cache_dtype": "auto"}}, "fp8 -> auto", says=("fp8", "remove engine.kvCacheDtype")),
    Boundary("cpu-fp8-kv-cache", "local", {"engine": {"kv_cache_dtype": "fp8_e5m2"}},
             {"engine": {"kv_cache_dtype": "bfloat16"}}, "fp8_e5m2 -> bfloat16"),
    Boundary("cpu-speculative-unsupported", "local",
             {"engine": {"speculative_config": SpeculativeSettings(method="ngram", num_speculative_tokens=2)}},
             {"engine": {"speculative_config": None}}, "ngram -> none",
             says=("ngram",), fix="remove engine.speculativeConfig"),
    Boundary("cpu-gpu-only-extra-arg", "local", {"engine": {"extra_args": ("--max-cudagraph-capture-size", "64")}},
             {"engine": {"extra_args": ("--enforce-eager",)}}, "--max-cudagraph-capture-size -> --enforce-eager",
             says=("--max-cudagraph-capture-size",)),
    Boundary("cpu-gpu-only-extra-arg", "local",
             {"engine": {"extra_args": ("--disable-custom-all-reduce", "--enable-flashinfer-autotune")}},
             {"engine": {"extra_args": ()}}, "all-reduce and FlashInfer flags -> none",
             says=("--disable-custom-all-reduce, --enable-flashinfer-autotune",)),
    Boundary("cpu-nvidia-runtime", "local", {"container": {"runtime": "nvidia"}}, {"container": {"runtime": None}},
             "runtime nvidia -> default", says=("nvidia",)),
    Boundary("cpu-mla-unsupported", "local", {"model": {"name": "DeepSeek-V3"}}, {"model": {"name": "Qwen3-0.6B"}},
             "DeepSeek-V3 (MLA) -> Qwen3-0.6B", says=("DeepseekV3ForCausalLM",)),
    Boundary("cpu-image-avx512-only", "local", {"image": {"tag": "v0.16.0"}}, {"image": {"tag": "v0.17.0"}},
             "v0.16.0 -> v0.17.0", says=("v0.16.0", "Illegal instruction", "v0.17.0 or later", "lscpu")),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_gpu_only_codes_are_rules() -> None:
    assert set(GPU_ONLY) <= set(rules.RULES_BY_CODE)


def test_gpu_rules_do_not_apply_to_a_cpu_target_and_do_to_a_gpu_one() -> None:
    cpu = {r.code for r in applicable(rules.RULES, Context(spec_of(shipped_settings("local"))))}
    gpu = {r.code for r in applicable(rules.RULES, Context(spec_of(shipped_settings("v100"))))}
    assert cpu == set(rules.RULES_BY_CODE) - GPU_ONLY
    assert gpu == set(rules.RULES_BY_CODE)


@pytest.mark.parametrize(("edits", "gpu_code"), [
    # bfloat16 on a CPU without a compute capability: vLLM's CPU platform runs it
    ({"engine": {"dtype": "bfloat16"}}, "dtype-bf16-unsupported"),
    # an FP8 checkpoint runs through torch's FP8 kernels on CPU, not through CC-gated CUDA ones
    ({"model": {"name": "Qwen3-32B-FP8"}}, "fp8-weights-unsupported"),
    # the CPU cache is VLLM_CPU_KVCACHE_SPACE: no GPU budget to exceed, whatever the model's size
    ({"model": {"name": "Qwen3-32B"}}, "weights-exceed-budget"),
    # no GPU memory to leave for the CUDA context: the CPU backend reads VLLM_CPU_KVCACHE_SPACE
    ({"engine": {"gpu_memory_utilization": 0.97}}, "gpu-memory-utilization-high"),
])
def test_a_cpu_target_gets_no_gpu_finding(edits: dict[str, dict[str, object]], gpu_code: str) -> None:
    assert gpu_code not in codes("local", edits)
    assert gpu_code in codes("local", {**edits, "hardware": {"device": "gpu", "gpu": "V100-32GB"}})
