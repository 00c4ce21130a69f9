"""The dtype vLLM computes in, and the bytes of the weights and the KV cache it implies.

One resolution for the planner and the rules (rules/base.py `Context.compute_dtype`,
rules/precision.py), read from vLLM v0.19.1 (paths under the wheel's `vllm/`):
- `config/model.py` `_get_and_verify_dtype`: a named `--dtype` is taken as is
  (`_STR_DTYPE_TO_TORCH_DTYPE`: half -> float16, float -> float32); `auto` goes to
  `_resolve_auto_dtype`, which keeps the checkpoint's `torch_dtype` when the platform supports it
  and the model accepts it, else falls back to the first dtype that is both; float32
  checkpoints are downcast to that first dtype.
- `platforms/cuda.py` `CudaPlatformBase.supported_dtypes`: bfloat16, float16, float32 from
  compute capability 8.0; float16, float32 below it.
- `config/model.py` `_FLOAT16_NOT_SUPPORTED_MODELS` (gemma2, gemma3, gemma3_text, plamo2, glm4;
  the catalog's `refuses_float16`): float16 is not valid for them, so below CC 8.0 `auto` runs
  float32 - the weights then take 4 bytes per parameter, and so does an `auto` KV cache
  (`utils/torch_utils.py` `kv_cache_dtype_str_to_dtype`: "auto" is the model's dtype).
"""

from __future__ import annotations

from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.models import ModelArchitecture

DTYPE_BYTES: dict[str, int] = {"bfloat16": 2, "float16": 2, "float32": 4}
FP8_KV = ("fp8", "fp8_e4m3", "fp8_e5m2")
# config/model.py _STR_DTYPE_TO_TORCH_DTYPE: the spellings that are not the dtype's own name.
_NAMED = {"half": "float16", "float": "float32"}


def platform_dtypes(gpu: GpuSpec) -> tuple[str, ...]:
    """The platform's supported dtypes, in vLLM's order of preference."""
    return ("bfloat16", "float16", "float32") if gpu.supports_bf16 else ("float16", "float32")


def compute_dtype(model: ModelArchitecture, gpu: GpuSpec, dtype: str | None) -> str:
    """The dtype vLLM runs the model in for `--dtype` (unset = auto) on this GPU."""
    if dtype not in (None, "auto"):
        return _NAMED.get(dtype, dtype)
    valid = [d for d in platform_dtypes(gpu) if not (d == "float16" and model.refuses_float16)]
    preferred = valid[0]
    wanted = preferred if model.weights_dtype == "float32" else model.weights_dtype
    return wanted if wanted in valid else preferred


def kv_dtype_bytes(kv_cache_dtype: str | None, compute: str) -> int:
    """Bytes per cached element: FP8 one, `auto` the compute dtype's."""
    if kv_cache_dtype in FP8_KV:
        return 1
    if kv_cache_dtype in (None, "auto"):
        return DTYPE_BYTES[compute]
    return DTYPE_BYTES[kv_cache_dtype]
