"""setup_server and validate_api_server_args (vllm/entrypoints/openai/api_server.py): the parser
plugins it imports, then the check, then the socket; the parser names are the registry's record of
v0.19.1's registrations, with those a plugin registers (tool_parsers/abstract_tool_parser.py
ToolParserManager.import_tool_parser: a plugin that fails to import is logged, not raised)."""

import importlib.util
import os
import socket

from vllm import RELEASE

REGISTERED_TOOL_PARSERS = []  # a plugin appends its parser's name, as @ToolParserManager.register_module does


def _import_plugin(path):
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception:
        print(f"ERROR Failed to load module '{name}' from {path}.")


def validate_api_server_args(args):
    valid_tool_parses = list(RELEASE["tool_parsers"]) + REGISTERED_TOOL_PARSERS
    if args.enable_auto_tool_choice and args.tool_call_parser not in valid_tool_parses:
        raise KeyError(
            f"invalid tool call parser: {args.tool_call_parser} "
            f"(chose from {{ {','.join(valid_tool_parses)} }})"
        )
    valid_reasoning_parsers = list(RELEASE["reasoning_parsers"])
    if (reasoning_parser := args.reasoning_parser) and reasoning_parser not in valid_reasoning_parsers:
        raise KeyError(
            f"invalid reasoning parser: {reasoning_parser} "
            f"(chose from {{ {','.join(valid_reasoning_parsers)} }})"
        )


def setup_server(args):
    if args.tool_parser_plugin and len(args.tool_parser_plugin) > 3:
        _import_plugin(args.tool_parser_plugin)
    validate_api_server_args(args)
    sock = socket.socket(family=socket.AF_INET, type=socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    port = 8000 if args.port is None else args.port  # FrontendArgs.port's default (the fake parser has none)
    sock.bind((args.host or "", port))
    return f"http://{args.host or '0.0.0.0'}:{port}", sock


async def run_server(args, **uvicorn_kwargs):
    raise RuntimeError("the engine check started vllm serve's API server")
