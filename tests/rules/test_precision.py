"""precision.py at its boundaries: dtype, FP8 weights and KV cache, attention backends."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, codes, gpu
from vllm_serving.catalog.models import MODELS
from vllm_serving.findings import config_key

QWEN = MODELS["Qwen3.5-27B"]
FP16_SHY = QWEN.model_copy(update={"refuses_float16": True, "model_type": "gemma2"})
SHY = {"name": None, "architecture": FP16_SHY}
QUANT_KEY = config_key("engine", "quantization")

BOUNDARIES = [
    Boundary("dtype-bf16-unsupported", "v100", {"engine": {"dtype": "bfloat16"}, "hardware": {"gpu": "T4"}},
             {"engine": {"dtype": "bfloat16"}, "hardware": {"gpu": "A100-40GB"}}, "T4 (7.5) -> A100 (8.0)"),
    Boundary("dtype-bf16-unsupported", "v100", {"engine": {"dtype": "bfloat16"}},
             {"engine": {"dtype": "half"}}, "bfloat16 -> half on V100"),
    Boundary("dtype-auto-falls-back-to-half", "v100", {"engine": {"dtype": None}, "hardware": {"gpu": "T4"}},
             {"engine": {"dtype": None}, "hardware": {"gpu": "A100-40GB"}}, "T4 (7.5) -> A100 (8.0)",
             says=("runs in float16", "engine.dtype: half")),
    Boundary("dtype-auto-falls-back-to-half", "v100", {"engine": {"dtype": "auto"}},
             {"engine": {"dtype": "half"}}, "auto -> half"),
    Boundary("dtype-auto-falls-back-to-half", "v100", {"engine": {"dtype": None}, "model": SHY},
             {"engine": {"dtype": "float32"}, "model": SHY}, "float16-refusing model falls back to float32",
             says=("runs in float32", "engine.dtype: float32")),
    Boundary("dtype-fp16-refused", "v100", {"engine": {"dtype": "half"}, "model": SHY},
             {"engine": {"dtype": None}, "model": SHY}, "half -> auto (vLLM picks float32)",
             says=("gemma2",)),
    Boundary("dtype-fp16-refused", "v100", {"engine": {"dtype": "float16"}, "model": SHY},
             {"engine": {"dtype": "float32"}, "model": SHY}, "float16 -> float32"),
    Boundary("fp8-weights-unsupported", "a100", {"hardware": {"gpu": "V100-32GB"}},
             {"hardware": {"gpu": "T4"}}, "V100 (7.0) -> T4 (7.5)", says=("7.5",)),
    Boundary("fp8-weights-unsupported", "v100", {"engine": {"quantization": "fp8"}},
             {"engine": {"quantization": "fp8"}, "hardware": {"gpu": "T4"}},
             "forced fp8 on V100 -> T4: blames engine.quantization", key=QUANT_KEY),
    Boundary("fp8-weights-weight-only", "a100", {"hardware": {"gpu": "A10"}}, {"hardware": {"gpu": "L4"}},
             "A10 (8.6) -> L4 (8.9)"),
    Boundary("fp8-weights-weight-only", "a100", {"hardware": {"gpu": "T4"}},
             {"hardware": {"gpu": "V100-32GB"}}, "T4 (7.5) -> V100 (7.0, unsupported instead)"),
    Boundary("fp8-weights-weight-only", "a100", {"gpu": gpu("CC-8.8", (8, 8))}, {"gpu": gpu("CC-8.9", (8, 9))},
             "CC 8.8 -> 8.9"),
    Boundary("fp8-weights-weight-only", "v100", {"engine": {"quantization": "fp8"}, "hardware": {"gpu": "A100-80GB"}},
             {"engine": {"quantization": None}, "hardware": {"gpu": "A100-80GB"}},
             "forced fp8 -> none: blames engine.quantization", key=QUANT_KEY),
    Boundary("fp8-kv-cache-unsupported", "v100", {"engine": {"kv_cache_dtype": "fp8"}},
             {"engine": {"kv_cache_dtype": "fp8"}, "hardware": {"gpu": "T4"}}, "V100 (7.0) -> T4 (7.5, FlashInfer)"),
    Boundary("fp8-kv-cache-unsupported", "v100", {"engine": {"kv_cache_dtype": "fp8_e4m3"}},
             {"engine": {"kv_cache_dtype": "fp8_e5m2"}}, "e4m3 -> e5m2 (Triton compiles e5m2 on V100)"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "TRITON_ATTN"}},
             {"engine": {"attention_backend": "TRITON_ATTN"}, "hardware": {"gpu": "L4"}},
             "Triton e4m3: A100 (8.0) -> L4 (8.9)", says=("FLASHINFER",)),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "TRITON_ATTN"},
                                              "gpu": gpu("CC-8.8", (8, 8))},
             {"engine": {"attention_backend": "TRITON_ATTN"}, "gpu": gpu("CC-8.9", (8, 9))}, "Triton e4m3: 8.8 -> 8.9"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLASH_ATTN"}},
             {"engine": {"attention_backend": "FLASH_ATTN"}, "hardware": {"gpu": "H100-80GB"}},
             "FlashAttention: A100 (FA2) -> H100 (FA3)"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLASH_ATTN"},
                                              "hardware": {"gpu": "B200"}},
             {"engine": {"attention_backend": "FLASHINFER"}, "hardware": {"gpu": "B200"}},
             "B200 (10.0): FlashAttention -> FlashInfer"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLEX_ATTENTION"}},
             {"engine": {"attention_backend": "FLASHINFER"}}, "Flex -> FlashInfer on A100"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLEX_ATTENTION"},
                                              "hardware": {"gpu": "L4"}},
             {"engine": {"attention_backend": "TRITON_ATTN"}, "hardware": {"gpu": "L4"}}, "L4: Flex -> Triton",
             fix="set engine.attentionBackend to one of FLASHINFER, TRITON_ATTN, or remove it "
                 "(auto-selection picks one)"),
    Boundary("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLASH_ATTN"}},
             {"engine": {"attention_backend": "FLASH_ATTN"}, "hardware": {"gpu": "T4"}},
             "FlashAttention: A100 -> T4 (it does not run there: attention-backend-unsupported instead)"),
    Boundary("attention-backend-unsupported", "v100", {"engine": {"attention_backend": "FLASHINFER"}},
             {"engine": {"attention_backend": "FLASHINFER"}, "hardware": {"gpu": "T4"}}, "FlashInfer: V100 -> T4"),
    Boundary("attention-backend-unsupported", "v100", {"engine": {"attention_backend": "FLASHINFER"},
                                                       "gpu": gpu("CC-12.2", (12, 2))},
             {"engine": {"attention_backend": "FLASHINFER"}, "gpu": gpu("CC-12.1", (12, 1))},
             "FlashInfer: CC 12.2 -> 12.1"),
    Boundary("attention-backend-unsupported", "v100", {"engine": {"attention_backend": "FLASH_ATTN"},
                                                       "hardware": {"gpu": "T4"}},
             {"engine": {"attention_backend": "FLASH_ATTN"}, "hardware": {"gpu": "A100-40GB"}},
             "FlashAttention: T4 (7.5) -> A100 (8.0)", says=("TRITON_ATTN",)),
    Boundary("attention-backend-unsupported", "v100", {"engine": {"attention_backend": "FLASH_ATTN"}},
             {"engine": {"attention_backend": "TRITON_ATTN"}}, "V100: FlashAttention -> Triton",
             fix="remove engine.attentionBackend or pick one of: TRITON_ATTN, FLEX_ATTENTION, TREE_ATTN"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_fp8_kv_on_a100_needs_no_pinned_backend() -> None:
    """vLLM's auto-selection skips FlashAttention-2 (no FP8 KV) and picks FlashInfer: no finding."""
    found = codes("a100", {"engine": {"attention_backend": None}})
    assert not found & {"fp8-kv-cache-unsupported", "fp8-kv-cache-backend", "attention-backend-unsupported"}
