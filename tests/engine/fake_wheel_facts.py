"""The fake wheel's files for the facts rules read beyond names and flags (registry schema 2).

Each file keeps the shape of the real one in vLLM v0.19.1 - the same paths, class and function
names and idioms (`validate_configuration` appending reasons, `supports_sink` asking the platform,
`_get_backend_priorities` returning lists per compute capability, `hf_config_override` rewriting
model types, `env_with_choices`, `_raise_unsupported_error`) - cut down to one or two of each, so
the generator's folding is tested without the network and without a real wheel.
"""

from __future__ import annotations

FACT_SOURCES = {
    "vllm/platforms/interface.py": '''
        from typing import NamedTuple

        import torch

        class DeviceCapability(NamedTuple):
            major: int
            minor: int

            def to_int(self) -> int:
                return self.major * 10 + self.minor

        class Platform:
            @classmethod
            def fp8_dtype(cls) -> torch.dtype:
                return torch.float8_e4m3fn
    ''',
    "vllm/platforms/cuda.py": '''
        from functools import cache

        from vllm.v1.attention.backends.registry import AttentionBackendEnum

        from .interface import DeviceCapability, Platform

        @cache
        def _get_backend_priorities(use_mla, device_capability, num_heads=None, kv_cache_dtype=None):
            if use_mla:
                return []
            if device_capability.major == 10:
                return [AttentionBackendEnum.FLASHINFER, AttentionBackendEnum.FLASH_ATTN,
                        AttentionBackendEnum.TRITON_ATTN]
            return [AttentionBackendEnum.FLASH_ATTN, AttentionBackendEnum.FLASHINFER,
                    AttentionBackendEnum.TRITON_ATTN]

        class CudaPlatformBase(Platform):
            pass

        class NvmlCudaPlatform(CudaPlatformBase):
            pass
    ''',
    "vllm/v1/attention/backends/registry.py": '''
        from enum import Enum

        class AttentionBackendEnum(Enum):
            FLASH_ATTN = "vllm.v1.attention.backends.flash_attn.FlashAttentionBackend"
            FLASHINFER = (
                "vllm.v1.attention.backends."
                "flashinfer.FlashInferBackend"
            )
            TRITON_ATTN = "vllm.v1.attention.backends.triton_attn.TritonAttentionBackend"
            CUSTOM = None
    ''',
    "vllm/v1/attention/backend.py": '''
        from typing import ClassVar

        import torch

        class AttentionBackend:
            supported_dtypes: ClassVar[list[torch.dtype]] = [torch.float16, torch.bfloat16]
            supported_kv_cache_dtypes = ["auto", "float16", "bfloat16"]

            @classmethod
            def get_supported_head_sizes(cls) -> list[int]:
                return []

            @classmethod
            def supports_head_size(cls, head_size: int) -> bool:
                supported_head_sizes = cls.get_supported_head_sizes()
                return (not supported_head_sizes) or head_size in supported_head_sizes

            @classmethod
            def supports_dtype(cls, dtype) -> bool:
                return dtype in cls.supported_dtypes

            @classmethod
            def supports_kv_cache_dtype(cls, kv_cache_dtype) -> bool:
                if kv_cache_dtype is None:
                    return True
                return kv_cache_dtype in cls.supported_kv_cache_dtypes

            @classmethod
            def supports_sink(cls) -> bool:
                return False

            @classmethod
            def supports_mm_prefix(cls) -> bool:
                return False

            @classmethod
            def supports_compute_capability(cls, capability):
                return True

            @classmethod
            def supports_combination(cls, head_size, dtype, kv_cache_dtype, has_sink, device_capability):
                return None

            @classmethod
            def validate_configuration(cls, head_size, dtype, kv_cache_dtype, has_sink, use_mm_prefix,
                                       device_capability):
                invalid_reasons = []
                if not cls.supports_head_size(head_size):
                    invalid_reasons.append("head_size not supported")
                if not cls.supports_dtype(dtype):
                    invalid_reasons.append("dtype not supported")
                if not cls.supports_kv_cache_dtype(kv_cache_dtype):
                    invalid_reasons.append("kv_cache_dtype not supported")
                if use_mm_prefix and not cls.supports_mm_prefix():
                    invalid_reasons.append("partial multimodal token full attention not supported")
                if has_sink and not cls.supports_sink():
                    invalid_reasons.append("attention sinks not supported")
                if not cls.supports_compute_capability(device_capability):
                    invalid_reasons.append("compute capability not supported")
                combination_reason = cls.supports_combination(
                    head_size, dtype, kv_cache_dtype, has_sink, device_capability
                )
                if combination_reason is not None:
                    invalid_reasons.append(combination_reason)
                return invalid_reasons
    ''',
    "vllm/v1/attention/backends/fa_utils.py": '''
        from vllm.platforms import current_platform

        def get_flash_attn_version(requires_alibi: bool = False, head_size=None):
            device_capability = current_platform.get_device_capability()
            if device_capability.major == 9:
                fa_version = 3
            else:
                fa_version = 2
            return fa_version

        def flash_attn_supports_sinks() -> bool:
            if current_platform.is_xpu():
                return True
            return get_flash_attn_version() == 3
    ''',
    "vllm/v1/attention/backends/flash_attn.py": '''
        import torch

        from vllm.platforms.interface import DeviceCapability
        from vllm.v1.attention.backend import AttentionBackend
        from vllm.v1.attention.backends.fa_utils import flash_attn_supports_sinks

        class FlashAttentionBackend(AttentionBackend):
            @staticmethod
            def get_fp8_dtype_for_flashattn(kv_cache_dtype: str) -> torch.dtype:
                if kv_cache_dtype in ("fp8", "fp8_e4m3"):
                    return torch.float8_e4m3fn
                else:
                    raise ValueError(f"Unrecognized FP8 dtype: {kv_cache_dtype}")

            @classmethod
            def supports_head_size(cls, head_size: int) -> bool:
                return head_size % 8 == 0 and head_size <= 256

            @classmethod
            def supports_sink(cls) -> bool:
                return flash_attn_supports_sinks()

            @classmethod
            def supports_compute_capability(cls, capability):
                return capability >= DeviceCapability(8, 0)

            @classmethod
            def supports_combination(cls, head_size, dtype, kv_cache_dtype, has_sink, device_capability):
                if has_sink and device_capability < DeviceCapability(9, 0):
                    return "sink not supported on compute capability < 9.0"
                return None
    ''',
    "vllm/v1/attention/backends/flashinfer.py": '''
        import torch

        from vllm.platforms import current_platform
        from vllm.platforms.interface import DeviceCapability
        from vllm.v1.attention.backend import AttentionBackend

        class FlashInferBackend(AttentionBackend):
            supported_kv_cache_dtypes = ["auto", "fp8", "fp8_e5m2"]

            @staticmethod
            def get_fp8_dtype_for_flashinfer(kv_cache_dtype: str) -> torch.dtype:
                if kv_cache_dtype in ("fp8", "fp8_e4m3"):
                    return torch.float8_e4m3fn
                elif kv_cache_dtype == "fp8_e5m2":
                    return torch.float8_e5m2
                else:
                    raise ValueError(f"Unrecognized FP8 dtype: {kv_cache_dtype}")

            @classmethod
            def get_supported_head_sizes(cls) -> list[int]:
                return [64, 128, 256]

            @classmethod
            def supports_compute_capability(cls, capability):
                return capability >= DeviceCapability(7, 5) and capability <= DeviceCapability(12, 1)

            @classmethod
            def supports_sink(cls) -> bool:
                return current_platform.is_device_capability_family(100) and has_nvidia_artifactory()
    ''',
    "vllm/v1/attention/backends/triton_attn.py": '''
        import torch

        from vllm.platforms import current_platform
        from vllm.v1.attention.backend import AttentionBackend
        from vllm.v1.attention.ops.triton_unified_attention import unified_attention

        class TritonAttentionBackend(AttentionBackend):
            supported_dtypes = [torch.float16, torch.bfloat16, torch.float32]
            supported_kv_cache_dtypes = ["auto", "fp8", "fp8_e5m2"]

            @staticmethod
            def get_impl_cls():
                return TritonAttentionImpl

            @classmethod
            def supports_head_size(cls, head_size: int) -> bool:
                return head_size >= 32

            @classmethod
            def supports_mm_prefix(cls) -> bool:
                return True

            @classmethod
            def supports_sink(cls) -> bool:
                return True

        class TritonAttentionImpl:
            def __init__(self, kv_cache_dtype):
                self.fp8_dtype = current_platform.fp8_dtype()
    ''',
    "vllm/v1/attention/ops/triton_unified_attention.py": '''
        def unified_attention(*args):
            pass
    ''',
    "vllm/transformers_utils/model_arch_config_convertor.py": '''
        class ModelArchConfigConvertorBase:
            def derive_max_model_len_and_key(self):
                possible_keys = [
                    "max_position_embeddings",
                    "n_positions",
                ]
                return possible_keys
    ''',
    "vllm/model_executor/models/registry.py": '''
        _TEXT_GENERATION_MODELS = {
            "GptOssForCausalLM": ("gpt_oss", "GptOssForCausalLM"),
            "Qwen3ForCausalLM": ("qwen3", "Qwen3ForCausalLM"),
        }
        _MULTIMODAL_MODELS = {
            "Gemma3ForConditionalGeneration": ("gemma3_mm", "Gemma3ForConditionalGeneration"),
        }
    ''',
    "vllm/model_executor/models/gpt_oss.py": '''
        class OAIAttention:
            def __init__(self, config):
                self.sinks = Parameter(config.num_attention_heads)
                self.attn = Attention(config.num_attention_heads, sinks=self.sinks)
    ''',
    "vllm/model_executor/models/qwen3.py": '''
        class Qwen3Attention:
            def __init__(self, config):
                self.attn = Attention(config.num_attention_heads)
    ''',
    "vllm/v1/spec_decode/eagle.py": '''
        class SpecDecodeBaseProposer:
            def _raise_if_multimodal(self):
                if self.supports_mm_inputs:
                    raise NotImplementedError(
                        "Speculative Decoding with draft models or parallel drafting "
                        "does not support multimodal models yet"
                    )
    ''',
    "vllm/distributed/utils.py": '''
        import vllm.envs as envs

        def get_pp_indices(num_hidden_layers, pp_rank, pp_size):
            partition_list_str = envs.VLLM_PP_LAYER_PARTITION
            if partition_list_str is not None:
                partitions = [int(layer) for layer in partition_list_str.split(",")]
                if len(partitions) != pp_size:
                    raise ValueError(f"{len(partitions)=} does not match {pp_size=}.")
                if sum(partitions) != num_hidden_layers:
                    raise ValueError(f"{sum(partitions)=} does not match {num_hidden_layers=}.")
    ''',
    "vllm/envs.py": '''
        import os

        def env_with_choices(env_name, default, choices, case_sensitive=True):
            def _get_validated_env():
                return os.getenv(env_name, default)
            return _get_validated_env

        environment_variables = {
            "VLLM_LOGGING_LEVEL": lambda: "INFO",
            "VLLM_API_KEY": lambda: None,
            "VLLM_MLA_DISABLE": lambda: bool(int(os.getenv("VLLM_MLA_DISABLE", "0"))),
            "VLLM_PP_LAYER_PARTITION": lambda: os.getenv("VLLM_PP_LAYER_PARTITION", None),
            "VLLM_KV_CACHE_LAYOUT": env_with_choices("VLLM_KV_CACHE_LAYOUT", None, ["NHD", "HND"]),
            "VLLM_FLOAT32_MATMUL_PRECISION": env_with_choices(
                "VLLM_FLOAT32_MATMUL_PRECISION", "highest", ["highest", "high"], case_sensitive=False
            ),
        }
    ''',
    "vllm/model_executor/layers/quantization/utils/marlin_utils.py": '''
        MARLIN_SUPPORTED_GROUP_SIZES = [-1, 32, 64, 128]

        def query_marlin_supported_quant_types(has_zp=None, include_fp_type=True, device_capability=None):
            if device_capability < 75:
                return []
            return [4]
    ''',
}

# Files of the base fake wheel this module extends (appended to them).
FACT_APPENDS = {
    "vllm/config/model.py": '''
        _FLOAT16_NOT_SUPPORTED_MODELS = {
            "gemma2": "Numerical instability.",
            "gemma3": "Numerical instability.",
        }

        def is_mm_prefix_lm(self) -> bool:
            MM_PREFIX_LM_MODELS = (
                "gemma3",
                "paligemma",
            )
            return self.hf_config.model_type in MM_PREFIX_LM_MODELS

        def _verify_quantization(self):
            overrides = [
                "awq_marlin",
            ]

        def _get_and_verify_max_len(hf_config, derived_max_model_len):
            if rope_parameters is not None and "gemma3" not in hf_config.model_type:
                for rp in rope_parameters.values():
                    rope_type = rp["rope_type"]
                    if rope_type not in ("su", "longrope", "llama3"):
                        scaling_factor = rp.get("factor", scaling_factor)
                        if rope_type == "yarn":
                            derived_max_model_len = rp["original_max_position_embeddings"]
    ''',
    "vllm/model_executor/layers/quantization/fp8.py": '''
        class Fp8MoEMethod:
            def create_weights(self, layer, num_experts, hidden_size, intermediate_size_per_partition):
                if self.block_quant:
                    tp_size = get_tensor_model_parallel_world_size()
                    block_n, block_k = self.weight_block_size[0], self.weight_block_size[1]
                    if intermediate_size_per_partition % block_n != 0:
                        raise ValueError(
                            f"The output_size of gate's and up's weight = "
                            f"{intermediate_size_per_partition} is not divisible by "
                            f"weight quantization block_n = {block_n}."
                        )
    ''',
}

# Files of the base fake wheel replaced whole: the methods the generator reads live in class bodies.
FACT_REPLACES = {
    "vllm/engine/arg_utils.py": '''
        import argparse
        import json

        from vllm.config.model import ModelConfig
        from vllm.config.parallel import ParallelConfig
        from vllm.config.vllm import VllmConfig

        def optional_type(return_type):
            return return_type

        def human_readable_int_or_auto(value):
            return int(value)

        def _compute_kwargs(cls):
            for field in fields(cls):
                if contains_type(type_hints, int):
                    if name == "max_model_len":
                        kwargs[name]["type"] = human_readable_int_or_auto

        def get_kwargs(cls):
            return _compute_kwargs(cls)

        class EngineArgs:
            max_num_partial_prefills: int = 1
            max_num_batched_tokens: int | None = None

            @staticmethod
            def add_cli_args(parser):
                model_kwargs = get_kwargs(ModelConfig)
                model_group = parser.add_argument_group(title="ModelConfig")
                model_group.add_argument("--max-model-len", **model_kwargs["max_model_len"])
                model_group.add_argument("--dtype", **model_kwargs["dtype"])
                model_group.add_argument("--enable-prefix-caching", **model_kwargs["enable_prefix_caching"])
                parallel_kwargs = get_kwargs(ParallelConfig)
                parser.add_argument(
                    "--tensor-parallel-size", "-tp", **parallel_kwargs["tensor_parallel_size"]
                )
                vllm_kwargs = get_kwargs(VllmConfig)
                vllm_kwargs["speculative_config"]["type"] = optional_type(json.loads)
                parser.add_argument("--speculative-config", "-sc", **vllm_kwargs["speculative_config"])
                parser.add_argument("--disable-log-stats", action="store_true")
                parser.add_argument("--max-num-partial-prefills", type=int)
                return parser

            def _check_feature_supported(self):
                if self.max_num_partial_prefills != 1:
                    _raise_unsupported_error(feature_name="Concurrent Partial Prefill")

            def __post_init__(self):
                # the shape of v0.30's elastic_ep_max_dp_size: the flag's value replaced, then tested
                self.max_num_partial_prefills = 1 if self.max_num_batched_tokens is None else 2
                if self.max_num_partial_prefills > 1:
                    raise ValueError("no gate: the test reads the value __post_init__ wrote")

            def _set_default_max_num_seqs_and_batched_tokens_args(self, usage_context, model_config):
                orig_max_num_batched_tokens = self.max_num_batched_tokens
                if self.performance_mode == "throughput":
                    if orig_max_num_batched_tokens is None:
                        self.max_num_batched_tokens *= 2

        class AsyncEngineArgs(EngineArgs):
            @staticmethod
            def add_cli_args(parser, async_args_only=False):
                if not async_args_only:
                    parser = EngineArgs.add_cli_args(parser)
                parser.add_argument("--enable-log-requests", action=argparse.BooleanOptionalAction)
                return parser

        def _raise_unsupported_error(feature_name: str):
            raise NotImplementedError(f"{feature_name} is not supported.")
    ''',
    "vllm/config/speculative.py": '''
        from typing import Literal, get_args

        from vllm.config.utils import config

        MTPModelTypes = Literal["qwen3_5_mtp", "mtp"]
        SpeculativeMethod = Literal["ngram", "eagle", "draft_model", MTPModelTypes]

        @config
        class SpeculativeConfig:
            method: SpeculativeMethod | None = None
            model: str | None = None

            @staticmethod
            def hf_config_override(hf_config):
                if hf_config.model_type == "qwen3_next":
                    hf_config.model_type = "qwen3_next_mtp"
                if hf_config.model_type == "qwen3_next_mtp":
                    n_predict = getattr(hf_config, "num_nextn_predict_layers", None)
                if hf_config.architectures[0] == "MiMoForCausalLM":
                    hf_config.model_type = "mimo_mtp"
                    n_predict = getattr(hf_config, "num_nextn_predict_layers", None)
                return hf_config

            def __post_init__(self):
                if self.method in get_args(MTPModelTypes) and self.method != "mtp":
                    self.method = "mtp"
                if self.model is None and self.num_speculative_tokens is not None:
                    if self.method == "mtp":
                        self.model = self.target_model_config.model
                    elif self.method in ("ngram", "[ngram]"):
                        self.model = "ngram"
                    else:
                        raise ValueError("num_speculative_tokens without speculative model.")

            def uses_draft_model(self) -> bool:
                return self.method == "draft_model"
    ''',
    "vllm/model_executor/layers/quantization/awq.py": '''
        import torch

        from .base_config import QuantizationConfig

        class AWQConfig(QuantizationConfig):
            def __init__(self, weight_bits, group_size, zero_point):
                self.weight_bits = weight_bits
                self.pack_factor = 32 // self.weight_bits

            @classmethod
            def get_min_capability(cls) -> int:
                # The AWQ kernel only supports Turing or newer GPUs.
                return 75

            @classmethod
            def get_supported_act_dtypes(cls):
                return [torch.half]

            @classmethod
            def from_config(cls, config):
                weight_bits = cls.get_from_keys(config, ["w_bit", "bits"])
                group_size = cls.get_from_keys(config, ["q_group_size", "group_size"])
                return cls(weight_bits, group_size, True)
    ''',
}
