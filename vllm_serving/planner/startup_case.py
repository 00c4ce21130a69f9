"""One vLLM start-up as a case of the corpus format (tests/fixtures/startup_logs/README.md):
the release, the GPU, the model's shape, the engine flags and what the log printed.

The corpus test and `vllm-stack calibrate --write-case` share this module, so a case a user
writes is read exactly as the gating cases are. A case is a mapping (the YAML as loaded).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from vllm_serving.catalog.gpus import GPUS, GpuSpec
from vllm_serving.catalog.vision import VisionEncoder
from vllm_serving.planner.available_memory import MemoryInputs, ModelShape

SHAPE_KEYS = ("hidden_size", "intermediate_size", "vocab_size", "num_layers",
              "num_attention_heads", "num_key_value_heads", "head_dim", "dtype_bytes")
OPTIONAL_SHAPE_KEYS = ("linear_attention_layers", "experts_per_token", "expert_intermediate_size")
"""Shape facts only some models have (hybrid layers, routed experts); absent means none."""
_WORD = re.compile(r"[a-z0-9]+")


def case_shape(model: Mapping[str, Any]) -> ModelShape:
    facts = {key: int(model[key]) for key in SHAPE_KEYS}
    facts |= {key: int(model[key]) for key in OPTIONAL_SHAPE_KEYS if key in model}
    return ModelShape(**facts)


def case_vision(case: Mapping[str, Any]) -> VisionEncoder | None:
    """The case's vision encoder (`model.vision`), unless the log ran the language model only."""
    vision = case["model"].get("vision")
    if vision is None or case["engine"].get("language_model_only"):
        return None
    return VisionEncoder.model_validate(vision)


def gpu_of(name: str) -> GpuSpec | None:
    """The catalog GPU a log's device name is (`Tesla T4 (Kaggle, x2)`, `NVIDIA H100 80GB HBM3`):
    the first entry sharing the most words with it, one of them a model number; None for a GPU
    given by memory alone (`24 GB`) or not in the catalog."""
    words = set(_WORD.findall(name.lower()))
    best, score = None, 0
    for gpu in GPUS.values():
        known = set(_WORD.findall(f"{gpu.name} {gpu.product_label}".lower()))
        shared = known & words
        if any(c.isalpha() for w in shared for c in w) and any(c.isdigit() for w in shared for c in w) \
                and len(shared) > score:
            best, score = gpu, len(shared)
    return best


def case_inputs(case: Mapping[str, Any]) -> MemoryInputs:
    """The estimator's inputs for a case: its release, GPU (the catalog entry its name is, for
    compute capability and SMs, unless the case states them), shape, flags and, where the log
    says which, the sampler and the model runner."""
    engine, gpu, model = case["engine"], case["gpu"], case["model"]
    known = gpu_of(str(gpu["name"]))
    capability = gpu.get("compute_capability")
    env = {"VLLM_USE_V2_MODEL_RUNNER": "1" if engine["model_runner"] == "v2" else "0"} if engine.get(
        "model_runner") else {}
    return MemoryInputs(
        vllm_version=str(case["vllm_version"]),
        gpu_total_gib=float(gpu["total_gib"]),
        gpu_name=str(gpu["name"]),
        weights_gib=float(case["logged"]["weights_gib"]),
        model=case_shape(model),
        gpu_memory_utilization=engine["gpu_memory_utilization"],
        tp=int(engine["tp"]),
        pp=int(engine["pp"]),
        max_num_batched_tokens=engine["max_num_batched_tokens"],
        max_num_seqs=engine["max_num_seqs"],
        usage_context=engine["usage_context"],
        enforce_eager=bool(engine["enforce_eager"]),
        sampler=engine["sampler"],
        env=env | dict(engine.get("env") or {}),
        flashinfer_installed=bool(engine.get("flashinfer_installed", True)),
        compute_capability=tuple(capability) if capability else (known.compute_capability if known else None),
        sm_count=gpu.get("sm_count") or (known.sm_count if known else None),
        architecture=str(model.get("architecture")) if model.get("architecture") else None,
        compile_cache_warm=engine.get("compile_cache") == "warm",
        quantized=bool(model.get("quantization") or engine.get("quantization")),
        vision=case_vision(case),
        max_model_len=int(engine["max_model_len"]) if engine.get("max_model_len") else None,
        mm_limits={str(k): int(v) for k, v in (engine.get("limit_mm_per_prompt") or {}).items()},
        skip_mm_profiling=bool(engine.get("skip_mm_profiling")),
        mm_encoder_data_parallel=engine.get("mm_encoder_tp_mode") == "data",
    )
