"""A tiny wheel with vLLM's file layout and a few of each fact, to run the generator offline
(the files the schema-2 facts are read from: fake_wheel_facts.py, fake_wheel_checks.py).

Each file mimics the shape of the real one in vLLM v0.19.1 (same paths, same idioms: config
dataclasses read by `get_kwargs`, `add_argument` calls with aliases, a lazy parser table, a
`Literal` of quantization methods ...), cut down to a handful of entries.
"""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path

from tests.engine.fake_wheel_checks import CHECK_REPLACES, CHECK_SOURCES
from tests.engine.fake_wheel_facts import FACT_APPENDS, FACT_REPLACES, FACT_SOURCES

SOURCES = {
    "vllm/__init__.py": "",
    "vllm/entrypoints/cli/serve.py": '''
        from vllm.entrypoints.openai.cli_args import make_arg_parser

        class ServeSubcommand:
            name = "serve"

            def subparser_init(self, subparsers):
                serve_parser = subparsers.add_parser(self.name)
                serve_parser = make_arg_parser(serve_parser)
                serve_parser.add_argument("--grpc", action="store_true", default=False)
                return serve_parser
    ''',
    "vllm/entrypoints/openai/cli_args.py": '''
        import json
        from typing import Literal

        from vllm.config.utils import config
        from vllm.engine.arg_utils import AsyncEngineArgs, get_kwargs

        @config
        class FrontendArgs:
            port: int = 8000
            api_key: list[str] | None = None
            uvicorn_log_level: Literal["info", "debug"] = "info"
            allowed_origins: list[str] = None

            @classmethod
            def _customize_cli_kwargs(cls, frontend_kwargs):
                frontend_kwargs["allowed_origins"]["type"] = json.loads
                del frontend_kwargs["allowed_origins"]["nargs"]
                return frontend_kwargs

            @classmethod
            def add_cli_args(cls, parser):
                frontend_kwargs = cls._customize_cli_kwargs(get_kwargs(cls))
                group = parser.add_argument_group(title="Frontend")
                for key, value in frontend_kwargs.items():
                    group.add_argument(f"--{key.replace('_', '-')}", **value)
                return parser

        def make_arg_parser(parser):
            parser.add_argument("model_tag", type=str, nargs="?")
            parser = FrontendArgs.add_cli_args(parser)
            parser = AsyncEngineArgs.add_cli_args(parser)
            return parser

        def validate_parsed_serve_args(args):
            if hasattr(args, "subparser") and args.subparser != "serve":
                return  # never taken under `vllm serve`
            if args.port == 8001:
                return  # taken by a flag's value: what follows holds only when it is not
            if getattr(args, "uvicorn_log_level", "info") == "debug" and args.port < 1024:
                raise TypeError("Error: debug logging needs an unprivileged port")
    ''',
    "vllm/config/utils.py": '''
        def config(cls):
            return cls
    ''',
    "vllm/config/parallel.py": '''
        from vllm.config.utils import config

        @config
        class ParallelConfig:
            tensor_parallel_size: int = 1
    ''',
    "vllm/config/model.py": '''
        from typing import Literal

        from vllm.config.utils import config

        ModelDType = Literal["auto", "half", "bfloat16"]

        @config
        class ModelConfig:
            max_model_len: int | None = None
            dtype: ModelDType = "auto"
            enable_prefix_caching: bool | None = None
    ''',
    "vllm/config/vllm.py": '''
        from vllm.config.speculative import SpeculativeConfig
        from vllm.config.utils import config

        @config
        class VllmConfig:
            speculative_config: SpeculativeConfig | None = None
    ''',
    "vllm/utils/argparse_utils.py": '''
        import regex as re
        from argparse import ArgumentParser

        class FlexibleArgumentParser(ArgumentParser):
            def parse_args(self, args=None, namespace=None):
                if "--config" in args:
                    args = self._pull_args_from_config(args)

                def repl(match):
                    return match.group(0).replace("_", "-")

                pattern = re.compile(r"(?<=--)[^\\.]*")
                processed_args = []
                for i, arg in enumerate(args):
                    if arg.startswith("--"):
                        if "=" in arg:
                            key, value = arg.split("=", 1)
                            processed_args.append(f"{pattern.sub(repl, key, count=1)}={value}")
                        else:
                            processed_args.append(pattern.sub(repl, arg, count=1))
                    elif arg.startswith("-O") and arg != "-O":
                        processed_args += ["--optimization-level", arg[2:]]
                for i, processed_arg in enumerate(processed_args):
                    if processed_arg.startswith("-") and "." in processed_arg:
                        if processed_arg.endswith("+"):
                            processed_arg = processed_arg[:-1]
                return super().parse_args(processed_args, namespace)
    ''',
    "vllm/tool_parsers/__init__.py": '''
        from vllm.tool_parsers.abstract_tool_parser import ToolParserManager

        _TOOL_PARSERS_TO_REGISTER = {
            "hermes": ("hermes_tool_parser", "Hermes2ProToolParser"),
            "qwen3_coder": ("qwen3coder_tool_parser", "Qwen3CoderToolParser"),
        }

        def register_lazy_tool_parsers():
            for name, (file_name, class_name) in _TOOL_PARSERS_TO_REGISTER.items():
                ToolParserManager.register_lazy_module(name, f"vllm.tool_parsers.{file_name}", class_name)

        register_lazy_tool_parsers()
    ''',
    "vllm/tool_parsers/abstract_tool_parser.py": '''
        class ToolParserManager:
            @classmethod
            def register_lazy_module(cls, name, module_path, class_name):
                cls.lazy[name] = (module_path, class_name)
    ''',
    "vllm/reasoning/__init__.py": '''
        from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager
    ''',
    "vllm/reasoning/qwen3_reasoning_parser.py": '''
        from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager

        @ReasoningParserManager.register_module(["qwen3", "qwen3_alt"])
        class Qwen3ReasoningParser:
            pass
    ''',
    "vllm/reasoning/abs_reasoning_parsers.py": '''
        class ReasoningParserManager:
            pass
    ''',
    "vllm/model_executor/layers/quantization/__init__.py": '''
        from typing import Literal

        QuantizationMethods = Literal["awq", "fp8"]
        DEPRECATED_QUANTIZATION_METHODS = ["awq"]

        def get_quantization_config(quantization):
            from .awq import AWQConfig
            from .fp8 import Fp8Config

            method_to_config: dict[str, type] = {"awq": AWQConfig, "fp8": Fp8Config}
            return method_to_config[quantization]
    ''',
    "vllm/model_executor/layers/quantization/base_config.py": '''
        class QuantizationConfig:
            @classmethod
            def get_min_capability(cls) -> int:
                raise NotImplementedError
    ''',
    "vllm/model_executor/layers/quantization/fp8.py": '''
        from .base_config import QuantizationConfig

        class Fp8Config(QuantizationConfig):
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
            CUSTOM = None
    ''',
    "vllm/v1/attention/backend.py": '''
        class AttentionBackend:
            supported_kv_cache_dtypes = ["auto", "float16", "bfloat16"]

            @classmethod
            def supports_compute_capability(cls, capability):
                return True
    ''',
    "vllm/v1/attention/backends/flash_attn.py": '''
        from vllm.v1.attention.backend import AttentionBackend

        class FlashAttentionBackend(AttentionBackend):
            @classmethod
            def supports_compute_capability(cls, capability):
                return capability >= DeviceCapability(8, 0)
    ''',
    "vllm/v1/attention/backends/flashinfer.py": '''
        from vllm.v1.attention.backend import AttentionBackend

        class FlashInferBackend(AttentionBackend):
            supported_kv_cache_dtypes = ["auto", "fp8"]

            @classmethod
            def supports_compute_capability(cls, capability):
                return capability >= DeviceCapability(7, 5) and capability <= DeviceCapability(12, 1)
    ''',
    "vllm/envs.py": '''
        environment_variables = {
            "VLLM_LOGGING_LEVEL": lambda: "INFO",
            "VLLM_API_KEY": lambda: None,
        }
    ''',
    "vllm/v1/metrics/loggers.py": '''
        class PrometheusStatLogger:
            def __init__(self, show_hidden_metrics):
                self.gauge_scheduler_running = self._gauge_cls(name="vllm:num_requests_running")
                if self.show_hidden_metrics:
                    self.gauge_old = self._gauge_cls(name="vllm:gpu_cache_usage_perc")
                self.counter_prompt_tokens = self._counter_cls(name="vllm:prompt_tokens")
                self.histogram_ttft = self._histogram_cls(
                    name="vllm:time_to_first_token_seconds", buckets=[0.1]
                )

            def log_metrics_info(self, type):
                if type == "cache_config":
                    name = "vllm:cache_config_info"
                info_gauge = self._gauge_cls(name=name)
    ''',
}


def build_wheel(directory: Path, version: str) -> Path:
    """Write the fake release as `vllm-<version>-py3-none-any.whl` in `directory`."""
    wheel = directory / f"vllm-{version}-py3-none-any.whl"
    merged = {**SOURCES, **FACT_REPLACES, **FACT_SOURCES, **CHECK_SOURCES, **CHECK_REPLACES}
    files = {path: textwrap.dedent(text).lstrip() for path, text in merged.items()}
    for path, text in FACT_APPENDS.items():
        files[path] = files.get(path, "") + "\n" + textwrap.dedent(text).lstrip()
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in sorted(files.items()):
            info = zipfile.ZipInfo(path, date_time=(2025, 1, 1, 0, 0, 0))
            zf.writestr(info, text)
        zf.writestr(zipfile.ZipInfo(f"vllm-{version}.dist-info/METADATA"), "Name: vllm\n")
    return wheel
