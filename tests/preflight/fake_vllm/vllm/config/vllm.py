"""The engine config and set_current_vllm_config (vllm/config/vllm.py), with the config classes'
checks the tests need: ModelConfig's max_model_len (vllm/config/model.py _get_and_verify_max_len)
and AttentionConfig's backend name (vllm/config/attention.py, v1/attention/backends/registry.py).
A config class's ValueError reaches the caller as pydantic's ValidationError, as vLLM's config
dataclasses (pydantic dataclasses) raise it."""

import contextlib
import os
from dataclasses import dataclass

from vllm import RELEASE

_current = None


class ValidationError(ValueError):
    """The shape of pydantic_core's ValidationError that callers read: title, errors()."""

    def __init__(self, title, error):
        self.title = title
        self.error = error
        super().__init__(f"1 validation error for {title}\n  Value error, {error} [type=value_error]")

    def errors(self, include_url=True):
        return [{"type": "value_error", "loc": (), "msg": f"Value error, {self.error}", "ctx": {"error": self.error}}]


@dataclass
class ModelConfig:
    model: str
    dtype: str
    max_model_len: int
    head_size: int
    use_mla: bool = False
    is_attention_free: bool = False
    is_mm_prefix_lm: bool = False

    def get_head_size(self):
        return self.head_size


@dataclass
class CacheConfig:
    cache_dtype: str
    gpu_memory_utilization: float
    block_size: int | None = None


@dataclass
class AttentionConfig:
    backend: str | None


@dataclass
class VllmConfig:
    model_config: ModelConfig
    cache_config: CacheConfig
    attention_config: AttentionConfig


def model_config(model, dtype, max_model_len, hf_config):
    text = hf_config.get("text_config", hf_config)
    derived = text.get("max_position_embeddings", 2048)
    if max_model_len is None:
        max_model_len = derived
    elif max_model_len > derived:
        msg = (f"User-specified max_model_len ({max_model_len}) is greater "
               f"than the derived max_model_len (max_position_embeddings="
               f"{derived} or model_max_length=None in model's config.json).")
        warning = ("VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses "
                   "relative position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. "
                   "If the model uses absolute position encoding, positions exceeding derived_max_model_len "
                   "will cause a CUDA array out-of-bounds error.")
        if os.environ.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "0").lower() not in ("1", "true"):
            raise ValidationError("ModelConfig", ValueError(
                f"{msg} To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. "
                f"{warning}"))
    stored = text.get("dtype") or text.get("torch_dtype") or "bfloat16"
    dtype = {"auto": stored, "half": "float16", "float": "float32"}.get(dtype, dtype)
    head_size = text.get("head_dim") or text.get("hidden_size", 4096) // text.get("num_attention_heads", 32)
    return ModelConfig(model, f"torch.{dtype}", max_model_len, head_size)


def attention_config(backend):
    if backend is None or backend.lower() == "auto":
        return AttentionConfig(None)
    members = RELEASE["attention_backends"]["backends"]
    if backend.upper() not in members:
        raise ValidationError("AttentionConfig", ValueError(
            f"Unknown attention backend: '{backend.upper()}'. Valid options are: {', '.join(members)}"))
    return AttentionConfig(backend.upper())


def get_current_vllm_config():
    return _current


@contextlib.contextmanager
def set_current_vllm_config(vllm_config, check_compile=False, prefix=None):
    global _current
    old, _current = _current, vllm_config
    try:
        yield
    finally:
        _current = old
