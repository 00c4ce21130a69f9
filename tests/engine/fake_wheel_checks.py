"""Files of the fake wheel for the checks vLLM makes while building its config and its layers
(shapes as in v0.19.1, cut down): model loaders, FP8 block shapes of linear layers, compressed-
tensors schemes, the speculative methods async scheduling takes, the targets eagle3 drafts for,
and the attention backends' kernel block sizes."""

from __future__ import annotations

from tests.engine.fake_wheel_facts import FACT_REPLACES, FACT_SOURCES

_SCHEMES = "vllm/model_executor/layers/quantization/compressed_tensors/schemes/"

CHECK_SOURCES = {
    # v0.29+: a TP shard that is not whole checkpoint blocks gets finer scale blocks
    "vllm/model_executor/layers/fused_moe/oracle/fp8.py": '''
        import math

        def refine_fp8_moe_block_shape(config, weight_block_size):
            block_n, block_k = weight_block_size
            ispp = config.intermediate_size_per_partition
            if ispp % block_n == 0 and (config.tp_size == 1 or ispp % block_k == 0):
                return None
            refine = math.gcd(block_n, block_k, ispp, config.hidden_dim)
            if refine < 32:
                return None
            return [refine, refine]
    ''',
    "vllm/v1/spec_decode/metrics.py": '''
        import prometheus_client

        class SpecDecodingProm:
            _counter_cls = prometheus_client.Counter

            def __init__(self, labelnames):
                counter_specs = [
                    ("vllm:spec_decode_num_drafts", "Number of spec decoding drafts."),
                    ("vllm:spec_decode_num_draft_tokens", "Number of draft tokens."),
                ]
                self.counters = [
                    self._counter_cls(name=name, documentation=doc, labelnames=labelnames)
                    for name, doc in counter_specs
                ]
    ''',
    "vllm/model_executor/model_loader/__init__.py": '''
        _LOAD_FORMAT_TO_MODEL_LOADER: dict[str, type[BaseModelLoader]] = {
            "auto": DefaultModelLoader,
            "safetensors": DefaultModelLoader,
            "dummy": DummyModelLoader,
        }

        def get_model_loader(load_config):
            load_format = load_config.load_format
            if load_format not in _LOAD_FORMAT_TO_MODEL_LOADER:
                raise ValueError(f"Load format `{load_format}` is not supported")
            return _LOAD_FORMAT_TO_MODEL_LOADER[load_format](load_config)
    ''',
    "vllm/model_executor/layers/quantization/utils/fp8_utils.py": '''
        def validate_fp8_block_shape(layer, input_size, output_size, input_size_per_partition,
                                     output_partition_sizes, block_size):
            tp_size = getattr(layer, "tp_size", get_tensor_model_parallel_world_size())
            block_n, block_k = block_size[0], block_size[1]
            if (
                tp_size > 1
                and input_size // input_size_per_partition == tp_size
                and input_size_per_partition % block_k != 0
            ):
                raise ValueError(
                    f"Weight input_size_per_partition = {input_size_per_partition} "
                    f"is not divisible by weight quantization block_k = {block_k}."
                )
            is_tp_split = tp_size > 1 and output_size // sum(output_partition_sizes) == tp_size
            if is_tp_split:
                for output_partition_size in output_partition_sizes:
                    if output_partition_size % block_n != 0:
                        raise ValueError(
                            f"Weight output_partition_size = {output_partition_size} is not divisible by "
                            f"weight quantization block_n = {block_n}."
                        )
    ''',
    _SCHEMES + "compressed_tensors_scheme.py": '''
        from abc import ABC, abstractmethod

        class CompressedTensorsScheme(ABC):
            @classmethod
            @abstractmethod
            def get_min_capability(cls) -> int:
                raise NotImplementedError
    ''',
    _SCHEMES + "compressed_tensors_w8a8_fp8.py": '''
        from .compressed_tensors_scheme import CompressedTensorsScheme

        class CompressedTensorsW8A8Fp8(CompressedTensorsScheme):
            @classmethod
            def get_min_capability(cls) -> int:
                # lovelace and up
                return 89
    ''',
    _SCHEMES + "compressed_tensors_wNa16.py": '''
        from .compressed_tensors_scheme import CompressedTensorsScheme

        class CompressedTensorsWNA16(CompressedTensorsScheme):
            @classmethod
            def get_min_capability(cls) -> int:
                return 75

        class CompressedTensorsWNA16Marlin(CompressedTensorsWNA16):
            pass
    ''',
}

_VERIFY_ARGS = '''
            def _verify_args(self):
                aux_hidden_states_supported = ["llama", "qwen", "gpt_oss"]
                if (
                    self.method in ("eagle3", "extract_hidden_states")
                    and self.target_model_config
                    and not any(
                        supported_model in self.target_model_config.hf_text_config.model_type
                        for supported_model in aux_hidden_states_supported
                    )
                ):
                    raise ValueError(f"{self.method} is only supported for {aux_hidden_states_supported} models.")
                return self

'''
_SPECULATIVE = FACT_REPLACES["vllm/config/speculative.py"]
_BACKEND = FACT_SOURCES["vllm/v1/attention/backend.py"]
_FLASHINFER = FACT_SOURCES["vllm/v1/attention/backends/flashinfer.py"]
_BLOCK_SIZES = '''
            @staticmethod
            def get_supported_kernel_block_sizes(kv_cache_spec=None):
                # v0.34: pages >= 128 only when the current config says Blackwell TRT-LLM serves them
                use_large_pages = False
                vllm_config = get_current_vllm_config_or_none()
                if vllm_config is not None and vllm_config.model_config is not None:
                    use_large_pages = vllm_config.model_config.get_num_kv_heads() > 0
                if not use_large_pages:
                    return [16, 32, 64]
                return [16, 32, 64, 128, 256, 512, 1024]

            @classmethod
            def get_supported_head_sizes(cls) -> list[int]:'''
_SUPPORTS_BLOCK_SIZE = '''
            @staticmethod
            def get_supported_kernel_block_sizes():
                return [MultipleOf(1)]

            @classmethod
            def supports_block_size(cls, block_size):
                if block_size is None:
                    return True
                for supported_size in cls.get_supported_kernel_block_sizes():
                    if isinstance(supported_size, MultipleOf):
                        supported_size = supported_size.base
                    if block_size % supported_size == 0:
                        return True
                return False

            @classmethod
            def supports_sink(cls) -> bool:'''
_HEAD_SIZE_CHECK = '''                if not cls.supports_head_size(head_size):'''

CHECK_REPLACES = {
    "vllm/config/vllm.py": '''
        from typing import Literal, get_args

        from vllm.config.speculative import MTPModelTypes, SpeculativeConfig
        from vllm.config.utils import config

        EagleModelTypes = Literal["eagle", "eagle3", MTPModelTypes]

        @config
        class VllmConfig:
            speculative_config: SpeculativeConfig | None = None

            def __post_init__(self):
                if self.scheduler_config.async_scheduling:
                    if self.speculative_config is not None:
                        if (
                            self.speculative_config.method not in get_args(EagleModelTypes)
                            and self.speculative_config.method != "draft_model"
                        ):
                            raise ValueError("Currently, async scheduling is only supported with EAGLE/MTP/Draft "
                                             "Model/NGram GPU kind of speculative decoding")
    ''',
    "vllm/config/speculative.py": _SPECULATIVE.replace("            def uses_draft_model", _VERIFY_ARGS.lstrip("\n")
                                                        + "            def uses_draft_model"),
    "vllm/v1/attention/backend.py": _BACKEND.replace(
        "device_capability):\n                invalid_reasons = []",
        "device_capability, block_size=None):\n                invalid_reasons = []\n"
        "                if block_size is not None and not cls.supports_block_size(block_size):\n"
        "                    invalid_reasons.append(\"block_size not supported\")").replace(
        "\n            @classmethod\n            def supports_sink(cls) -> bool:", _SUPPORTS_BLOCK_SIZE, 1),
    "vllm/v1/attention/backends/flashinfer.py": _FLASHINFER.replace(
        "\n            @classmethod\n            def get_supported_head_sizes(cls) -> list[int]:", _BLOCK_SIZES),
}
assert all(CHECK_REPLACES[p] != t for p, t in (("vllm/config/speculative.py", _SPECULATIVE),
                                                ("vllm/v1/attention/backend.py", _BACKEND),
                                                ("vllm/v1/attention/backends/flashinfer.py", _FLASHINFER)))
assert "supports_block_size(cls, block_size)" in CHECK_REPLACES["vllm/v1/attention/backend.py"]
assert _HEAD_SIZE_CHECK in _BACKEND
