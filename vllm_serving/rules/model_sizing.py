"""Multi-head latent attention where vLLM cannot serve it.

The planner sizes MLA (DeepSeek-V2/V3/R1) and sliding-window (gpt-oss, Gemma 3) KV caches as
vLLM v0.19.1 lays them out (planner/kv_sizing.py, planner/mla_backends.py), so these rules only
refuse what vLLM itself refuses (paths under the wheel's `vllm/`):
- below compute capability 8.0 and on CPU no MLA model runs: its prefill is FlashAttention 2
  (`model_executor/layers/attention/mla_attention.py` `MLACommonImpl.__init__`,
  `vllm_flash_attn/flash_attn_interface.py` `_is_fa2_supported`), and `platforms/cpu.py` raises
  "MLA is not supported on CPU";
- every MLA backend computes in float16/bfloat16 and reads an auto, fp8 or fp8_e4m3 KV cache:
  another dtype leaves none (`platforms/cuda.py` `get_attn_backend_cls`: "No valid attention
  backend found");
- a forced non-MLA `--attention-backend` fails `validate_configuration` ("MLA not supported").
`VLLM_MLA_DISABLE=1` in engine.env turns MLA off (the model runs as ordinary attention), and
these rules with it.
"""

from __future__ import annotations

from vllm_serving.findings import Severity, config_key
from vllm_serving.planner.mla_backends import (
    MLA_BACKENDS,
    MLA_MIN_CC,
    mla_backend,
    mla_disabled_env,
    uses_mla,
)
from vllm_serving.rules.attention import forced
from vllm_serving.rules.base import KEY, Context, Facts, Rule
from vllm_serving.startup.attention import invalid_reasons, query_for

GPU = config_key("hardware", "gpu")
KV = config_key("engine", "kvCacheDtype")


def _mla(ctx: Context) -> bool:
    return uses_mla(ctx.model, mla_disabled_env(ctx.engine.env))


def _unsupported_gpu(ctx: Context) -> Facts | None:
    if not _mla(ctx) or ctx.gpu.compute_capability >= MLA_MIN_CC:
        return None
    cpu = not ctx.settings.hardware.uses_gpus
    return {KEY: config_key("hardware", "device") if cpu else GPU, "arch": ctx.model.architecture,
            "where": "the CPU backend" if cpu else f"{ctx.gpu.name} (CC {ctx.gpu.cc_text})"}


def _no_backend(ctx: Context) -> Facts | None:
    if not _mla(ctx) or ctx.gpu.compute_capability < MLA_MIN_CC:
        return None
    if mla_backend(ctx.model, ctx.gpu, ctx.compute_dtype, ctx.engine.kv_cache_dtype) is not None:
        return None
    kv = ctx.engine.kv_cache_dtype or "auto"
    # The dtype all MLA kernels lack is the cause when the KV dtype is one they read.
    kv_readable = any(kv in backend.kv_cache_dtypes for backend in MLA_BACKENDS.values())
    return {KEY: config_key("engine", "dtype") if kv_readable else KV, "arch": ctx.model.architecture,
            "dtype": ctx.compute_dtype, "kv": kv, "gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text}


def _forced_backend(ctx: Context) -> Facts | None:
    """A forced backend the release's `validate_configuration` refuses for the MLA layers (a
    non-MLA backend: "MLA not supported"); MLA backends it accepts pass (TRITON_MLA ...)."""
    backend = forced(ctx)
    if not _mla(ctx) or backend is None:
        return None
    query = query_for(ctx.release, ctx.model, ctx.gpu, ctx.compute_dtype, ctx.engine.kv_cache_dtype, use_mla=True,
                      tp=ctx.tp)
    found = invalid_reasons(ctx.release, backend, query)
    if found is not None and not found[0]:
        return None  # valid, or a check the registry could not read: not refused
    if found is None and backend in MLA_BACKENDS:
        return None
    reasons = "; ".join(found[0]) if found is not None else "MLA not supported"
    chosen = mla_backend(ctx.model, ctx.gpu, ctx.compute_dtype, ctx.engine.kv_cache_dtype)
    return {"backend": backend, "arch": ctx.model.architecture, "reasons": reasons,
            "auto": chosen.name if chosen is not None else "none on this GPU"}


SRC = ("vllm/model_executor/layers/attention/mla_attention.py MLAAttention.__init__, MLACommonImpl.__init__; "
       "vllm/platforms/cuda.py _get_backend_priorities, CudaPlatformBase.get_attn_backend_cls; "
       "vllm/v1/attention/backends/mla/*.py")

RULES: tuple[Rule, ...] = (
    Rule("model-mla-gpu-unsupported", Severity.ERROR, GPU,
         "{arch} uses multi-head latent attention, which vLLM runs only on GPUs of compute capability 8.0 "
         "or newer (its prefill is FlashAttention 2), not on {where}",
         "serve it on GPUs of compute capability 8.0 or newer (A100, L40S, H100, H200, B200)",
         "An MLA model (DeepSeek-V2/V3/R1) on a GPU of compute capability 8.0+ (not V100, T4 or CPU).",
         "vLLM fails on the first prefill (FlashAttention 2 has no kernel for the GPU) or, on CPU, at start-up "
         "(\"MLA is not supported on CPU\").",
         SRC + "; vllm/vllm_flash_attn/flash_attn_interface.py _is_fa2_supported; vllm/platforms/cpu.py",
         _unsupported_gpu),
    Rule("model-mla-no-backend", Severity.ERROR, KV,
         "no MLA attention backend runs {arch} in {dtype} with a {kv} KV cache on {gpu} (CC {cc})",
         "set engine.dtype to bfloat16 or half (MLA kernels have no float32) and engine.kvCacheDtype to "
         "auto, fp8 or fp8_e4m3",
         "An MLA model's compute and KV cache dtypes are ones an MLA backend reads on the GPU.",
         "vLLM exits at start-up: \"No valid attention backend found\".",
         SRC + "; vllm/v1/attention/backend.py AttentionBackend.validate_configuration", _no_backend),
    Rule("model-mla-attention-backend", Severity.ERROR, config_key("engine", "attentionBackend"),
         "{backend} cannot run the multi-head latent attention of {arch}: {reasons}",
         "remove engine.attentionBackend: vLLM picks an MLA backend itself ({auto})",
         "A forced engine.attentionBackend on an MLA model is an MLA backend the release accepts for it "
         "(its validate_configuration, from the registry).",
         "vLLM exits at start-up: \"Selected backend ... is not valid for this configuration. Reason: "
         "['MLA not supported']\".",
         SRC + "; vllm/v1/attention/backend.py AttentionBackend.validate_configuration", _forced_backend),
)
