"""get_attn_backend (vllm/v1/attention/selector.py) with the CUDA platform's check of a selected
backend (vllm/platforms/cuda.py get_attn_backend_cls); the stand-in has no GPU, so without a
selection it picks TRITON_ATTN, which runs on any."""

from vllm.config import get_current_vllm_config

FP8_KV_UNSUPPORTED = {"FLASH_ATTN"}  # FlashAttention-2 has no FP8 KV cache


class Backend:
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


def get_attn_backend(head_size, dtype, kv_cache_dtype, use_mla=False, has_sink=False, use_sparse=False,
                     use_mm_prefix=False, use_per_head_quant_scales=False, attn_type=None, num_heads=None):
    selected_backend = get_current_vllm_config().attention_config.backend
    if selected_backend is None:
        return Backend("TRITON_ATTN")
    invalid_reasons = []
    if selected_backend in FP8_KV_UNSUPPORTED and kv_cache_dtype.startswith("fp8"):
        invalid_reasons.append("kv_cache_dtype not supported")
    if invalid_reasons:
        raise ValueError(
            f"Selected backend AttentionBackendEnum.{selected_backend} is not valid for "
            f"this configuration. Reason: {invalid_reasons}"
        )
    return Backend(selected_backend)
