"""The generator's `preflight_entry_points` section (tools/vllm_release/entry_points.py), read from
small source trees with vLLM's layouts: v0.19.1's (the API server in entrypoints/openai/api_server.py)
and v0.34's (launchers, common/cli_args.py, the extensible KV cache), each cut down to the imports
and definitions the generator follows (shapes copied from those releases' files of the same path)."""

from __future__ import annotations

import textwrap

from tools.vllm_release.entry_points import extract_entry_points
from tools.vllm_release.source_tree import SourceTree

COMMON = {
    "vllm/__init__.py": "",
    "vllm/usage/usage_lib.py": "class UsageContext: ...",
    "vllm/utils/argparse_utils.py": "class FlexibleArgumentParser: ...",
    "vllm/config/__init__.py": """
        from vllm.config.cache import CacheConfig
        from vllm.config.vllm import set_current_vllm_config
    """,
    "vllm/config/vllm.py": "def set_current_vllm_config(vllm_config, check_compile=False, prefix=None): ...",
    "vllm/engine/arg_utils.py": """
        class EngineArgs:
            @classmethod
            def from_cli_args(cls, args): ...
            def create_engine_config(self, usage_context=None, headless=False): ...
        class AsyncEngineArgs(EngineArgs): ...
    """,
    "vllm/v1/attention/selector.py": """
        def get_attn_backend(head_size, dtype, kv_cache_dtype, use_mla=False, *, num_heads=None): ...
    """,
    "vllm/model_executor/layers/attention/attention.py": """
        from vllm.v1.attention.selector import get_attn_backend
        class Attention: ...
    """,
    "vllm/model_executor/layers/attention/__init__.py": "from .attention import Attention",
    "vllm/model_executor/models/llama.py": "from vllm.model_executor.layers.attention import Attention",
    "vllm/v1/worker/utils.py": """
        import math
        def request_memory(init_snapshot, cache_config):
            requested_memory = math.ceil(init_snapshot.total_memory * cache_config.gpu_memory_utilization)
            if init_snapshot.free_memory < requested_memory:
                raise ValueError(f"Free memory on device ... on startup is less than desired GPU memory utilization")
    """,
}
V0_19 = COMMON | {
    "vllm/entrypoints/utils.py": "def cli_env_setup(): ...",
    "vllm/entrypoints/cli/main.py": """
        def main():
            import vllm.entrypoints.cli.serve
            from vllm.entrypoints.utils import VLLM_SUBCMD_PARSER_EPILOG, cli_env_setup
            cli_env_setup()
    """,
    "vllm/entrypoints/cli/serve.py": """
        from vllm.entrypoints.openai.api_server import run_server, setup_server
        from vllm.entrypoints.openai.cli_args import make_arg_parser, validate_parsed_serve_args
        from vllm.usage.usage_lib import UsageContext
        from vllm.utils.argparse_utils import FlexibleArgumentParser
        class ServeSubcommand: ...
    """,
    "vllm/entrypoints/openai/cli_args.py": """
        def make_arg_parser(parser): ...
        def validate_parsed_serve_args(args): ...
    """,
    "vllm/entrypoints/openai/api_server.py": """
        from vllm.engine.arg_utils import AsyncEngineArgs
        async def build_async_engine_client(args): ...
        def validate_api_server_args(args): ...
        def setup_server(args): ...
        async def run_server(args): ...
    """,
    "vllm/config/cache.py": "class CacheConfig:\n    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)",
}
V0_34 = COMMON | {
    "vllm/logger.py": "def configure_logging_from_args(args): ...\ndef init_logger(name): ...",
    "vllm/entrypoints/common/startup.py": "def cli_env_setup(): ...",
    "vllm/entrypoints/cli/main.py": """
        from vllm.logger import configure_logging_from_args, init_logger
        def main():
            from vllm.entrypoints.common.startup import VLLM_SUBCMD_PARSER_EPILOG, cli_env_setup
            cli_env_setup()
            configure_logging_from_args(args)
    """,
    "vllm/entrypoints/cli/serve.py": """
        from vllm.entrypoints.common.cli_args import make_arg_parser, validate_parsed_serve_args
        from vllm.entrypoints.launchers.api_server.entry import run_server, setup_server
        from vllm.usage.usage_lib import UsageContext
        from vllm.utils.argparse_utils import FlexibleArgumentParser
        class ServeSubcommand: ...
    """,
    "vllm/entrypoints/common/cli_args.py": """
        def make_arg_parser(parser): ...
        def validate_parsed_serve_args(args): ...
        def validate_api_server_args(args): ...
    """,
    "vllm/entrypoints/launchers/launcher.py": """
        from vllm.entrypoints.common.cli_args import validate_api_server_args
        def setup_server(args, *, reuse_port: bool): ...
    """,
    "vllm/entrypoints/launchers/api_server/entry.py": """
        from vllm.engine.arg_utils import AsyncEngineArgs
        from ..launcher import setup_server
        async def build_async_engine_client(args): ...
        async def run_server(args): ...
    """,
    "vllm/config/cache.py": """
        class CacheConfig:
            DEFAULT_GPU_MEMORY_UTILIZATION: ClassVar[float] = 0.92
            gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
            enable_extensible_kv_cache: bool = Field(default=None)
    """,
}


def _tree(files: dict[str, str]) -> SourceTree:
    return SourceTree({path: textwrap.dedent(text).encode() for path, text in files.items()})


def test_v0_19_layout() -> None:
    problems: list[str] = []
    section = extract_entry_points(_tree(V0_19), problems)
    assert problems == []
    assert section["calls"] == {
        "cli_setup": "vllm.entrypoints.utils:cli_env_setup",  # imported inside cli/main.py's main()
        "server_setup": "vllm.entrypoints.openai.api_server:setup_server",
        "argument_parser": "vllm.utils.argparse_utils:FlexibleArgumentParser",
        "serve_subcommand": "vllm.entrypoints.cli.serve:ServeSubcommand",
        "serve_validation": "vllm.entrypoints.openai.cli_args:validate_parsed_serve_args",
        "api_server_validation": "vllm.entrypoints.openai.api_server:validate_api_server_args",
        "engine_args": "vllm.engine.arg_utils:AsyncEngineArgs",
        "usage_context": "vllm.usage.usage_lib:UsageContext",
        "config_context": "vllm.config.vllm:set_current_vllm_config",
        "attention_selector": "vllm.v1.attention.selector:get_attn_backend",
    }  # no logging_setup: before v0.31 main.py calls none, which is not a problem
    assert section["memory"] == {"check": "vllm/v1/worker/utils.py:request_memory",
                                 "default_gpu_memory_utilization": 0.9, "extensible_kv_cache": False}
    assert section["signatures"] == {
        "create_engine_config": {"usage_context": "optional", "headless": "optional"},  # inherited
        "attention_selector": {"head_size": "required", "dtype": "required", "kv_cache_dtype": "required",
                               "use_mla": "optional", "num_heads": "optional"},
    }


def test_v0_34_layout_follows_the_launchers() -> None:
    problems: list[str] = []
    section = extract_entry_points(_tree(V0_34), problems)
    assert problems == []
    calls = section["calls"]
    # validate_api_server_args where setup_server (launcher.py) imports it; AsyncEngineArgs where run_server's
    # module builds the engine client
    assert calls["api_server_validation"] == "vllm.entrypoints.common.cli_args:validate_api_server_args"
    assert calls["serve_validation"] == "vllm.entrypoints.common.cli_args:validate_parsed_serve_args"
    assert calls["engine_args"] == "vllm.engine.arg_utils:AsyncEngineArgs"
    # setup_server where it is defined (the api_server package re-exports it), cli_env_setup where main() imports it
    assert calls["server_setup"] == "vllm.entrypoints.launchers.launcher:setup_server"
    assert calls["cli_setup"] == "vllm.entrypoints.common.startup:cli_env_setup"
    # v0.31+: main.py's module-level import of the logging step it calls before validating
    assert calls["logging_setup"] == "vllm.logger:configure_logging_from_args"
    assert section["memory"]["default_gpu_memory_utilization"] == 0.92
    assert section["memory"]["extensible_kv_cache"] is True


def test_what_cannot_be_followed_is_null_and_listed() -> None:
    files = dict(V0_19)
    del files["vllm/model_executor/models/llama.py"]
    files["vllm/v1/worker/utils.py"] = "def request_memory(init_snapshot, cache_config): ..."
    problems: list[str] = []
    section = extract_entry_points(_tree(files), problems)
    assert section["calls"]["attention_selector"] is None and section["signatures"]["attention_selector"] is None
    assert section["memory"]["check"] is None
    assert problems == ["preflight_entry_points: attention_selector not found",
                        "preflight_entry_points: memory check not found"]


def test_a_logging_step_main_calls_but_cannot_be_followed_is_listed() -> None:
    files = dict(V0_34)
    del files["vllm/logger.py"]
    problems: list[str] = []
    section = extract_entry_points(_tree(files), problems)
    assert section["calls"]["logging_setup"] is None
    assert problems == ["preflight_entry_points: logging_setup not found"]
