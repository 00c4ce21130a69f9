"""Multi-head latent attention in vLLM v0.19.1: which backend serves it on a GPU, the KV block
size that backend brings, and where none can (paths under the wheel's `vllm/`).

- `platforms/cuda.py` `_get_backend_priorities(use_mla=True)`: the order backends are tried in,
  one list for compute capability 10.x and one for every other GPU; `get_attn_backend_cls`
  takes the first whose `validate_configuration` passes (`v1/attention/backend.py`: compute
  capability, model dtype, KV cache dtype, block size when `--block-size` is given).
- `platforms/interface.py` `update_block_size_for_backend`: without `--block-size` the cache
  takes the backend's `get_preferred_block_size(16)`: 16 if the kernel accepts it, else the
  smallest block it lists (FlashMLA 64, FlashInfer MLA 32, CUTLASS MLA 128).
- `model_executor/layers/attention/mla_attention.py` `MLACommonImpl.__init__`: prefill runs
  FlashAttention (`vllm_flash_attn`) except on Blackwell with FlashInfer; FA2 needs compute
  capability 8.0 (`vllm_flash_attn/flash_attn_interface.py` `_is_fa2_supported`), so no MLA
  model runs below it. `platforms/cpu.py` `get_attn_backend_cls` raises "MLA is not supported on CPU".
- `VLLM_MLA_DISABLE=1` (`envs.py`; `config/model.py` `ModelConfig.use_mla`) runs the model as
  ordinary attention instead: per-head K and V of qk_nope + qk_rope values
  (`transformers_utils/model_arch_config_convertor.py` `get_head_size`).
Sparse MLA (DeepSeek-V3.2's indexer) is not modelled: no catalog model uses it.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.models import ModelArchitecture

# CacheConfig.DEFAULT_BLOCK_SIZE, what update_block_size_for_backend asks a backend about.
DEFAULT_BLOCK_SIZE = 16
# FlashAttention 2, which MLA's prefill runs on (flash_attn_interface.py _is_fa2_supported).
MLA_MIN_CC = (8, 0)
MLA_DISABLE_ENV = "VLLM_MLA_DISABLE"
_HALF = ("float16", "bfloat16")


class MlaBackend(msgspec.Struct, frozen=True):
    """One MLA backend's `validate_configuration` inputs, as its class states them."""

    name: str
    majors: tuple[int, ...] | None
    """Compute capability majors it runs on (`supports_compute_capability`); None: any."""
    kv_cache_dtypes: tuple[str, ...]
    """`supported_kv_cache_dtypes`."""
    block_sizes: tuple[int, ...]
    """`get_supported_kernel_block_sizes` (a block size must be a multiple of one of them)."""
    qk_nope_head_dims: tuple[int, ...] | None = None
    """`supports_combination`: the qk_nope_head_dim its kernel takes; None: any."""
    source: str = ""


_AUTO = ("auto", "float16", "bfloat16")
_FP8 = (*_AUTO, "fp8", "fp8_e4m3")
MLA_BACKENDS: dict[str, MlaBackend] = {b.name: b for b in (
    # FLASH_ATTN_MLA needs FA3, built for Hopper only (fa_utils.py flash_attn_supports_mla).
    MlaBackend("FLASH_ATTN_MLA", (9,), _AUTO, (16,), source="v1/attention/backends/mla/flashattn_mla.py"),
    # FlashMLA lists 9 and 10, but its dense kernel runs on the 9.x family only
    # (v1/attention/ops/flashmla.py is_flashmla_dense_supported).
    MlaBackend("FLASHMLA", (9,), _FP8, (64,), source="v1/attention/backends/mla/flashmla.py"),
    MlaBackend("FLASHINFER_MLA", (10,), _FP8, (32, 64), (64, 128, 192),
               source="v1/attention/backends/mla/flashinfer_mla.py"),
    MlaBackend("CUTLASS_MLA", (10,), _FP8, (128,), source="v1/attention/backends/mla/cutlass_mla.py"),
    MlaBackend("TRITON_MLA", None, _FP8, (16,), source="v1/attention/backends/mla/triton_mla.py"),
)}
# platforms/cuda.py _get_backend_priorities, use_mla and not sparse.
PRIORITY_BLACKWELL = ("FLASHINFER_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHMLA", "TRITON_MLA")
PRIORITY_OTHER = ("FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA")


def uses_mla(model: ModelArchitecture, mla_disabled: bool = False) -> bool:
    """vLLM's `use_mla`: the model has MLA facts and VLLM_MLA_DISABLE is not set."""
    return model.mla is not None and not mla_disabled


def mla_disabled_env(env: Mapping[str, str] | None) -> bool:
    """VLLM_MLA_DISABLE from engine.env, read as envs.py reads it (bool(int(value)))."""
    value = (env or {}).get(MLA_DISABLE_ENV, "0").strip()
    return value.lstrip("-").isdigit() and int(value) != 0


def _accepts(backend: MlaBackend, model: ModelArchitecture, gpu: GpuSpec, compute: str, kv: str,
             block_size: int | None) -> bool:
    mla = model.mla
    assert mla is not None
    return ((backend.majors is None or gpu.compute_capability[0] in backend.majors)
            and compute in _HALF and kv in backend.kv_cache_dtypes
            and (block_size is None or any(block_size % size == 0 for size in backend.block_sizes))
            and (backend.qk_nope_head_dims is None or mla.qk_nope_head_dim in backend.qk_nope_head_dims))


def mla_backend(model: ModelArchitecture, gpu: GpuSpec, compute: str, kv_cache_dtype: str | None,
                block_size: int | None = None) -> MlaBackend | None:
    """The backend vLLM selects for an MLA model; None where none runs (no GPU, CC < 8.0, or no
    backend takes the dtypes)."""
    if gpu.compute_capability < MLA_MIN_CC:
        return None
    priority = PRIORITY_BLACKWELL if gpu.compute_capability[0] == 10 else PRIORITY_OTHER
    kv = kv_cache_dtype or "auto"
    return next((MLA_BACKENDS[name] for name in priority
                 if _accepts(MLA_BACKENDS[name], model, gpu, compute, kv, block_size)), None)


def preferred_block_size(backend: MlaBackend) -> int:
    """Backend.get_preferred_block_size(16): 16 if the kernel takes it, else its smallest block."""
    if any(DEFAULT_BLOCK_SIZE % size == 0 for size in backend.block_sizes):
        return DEFAULT_BLOCK_SIZE
    return min(backend.block_sizes)
