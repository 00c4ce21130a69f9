"""make_arg_parser and validate_parsed_serve_args (vllm/entrypoints/openai/cli_args.py); the
flags are the registry's record of v0.19.1's `add_argument` calls."""

import argparse
import json
import re

from vllm import RELEASE

SUFFIXES = {"k": 10**3, "m": 10**6, "g": 10**9, "K": 2**10, "M": 2**20, "G": 2**30}


def human_readable_int(value):
    """vllm/engine/arg_utils.py human_readable_int: 25600, 25.6k, 32K."""
    found = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG]?)", value)
    if not found:
        raise argparse.ArgumentTypeError(f"Invalid number: {value!r}")
    number, suffix = found.groups()
    return int(float(number) * SUFFIXES.get(suffix, 1))


TYPES = {"int": int, "float": float, "str": str, "json": json.loads, "bool": lambda v: v.lower() in ("1", "true")}


def make_arg_parser(parser):
    for positional in RELEASE["positionals"]:
        parser.add_argument(positional, nargs="?")
    for name, flag in RELEASE["flags"].items():
        options = [name, *flag["aliases"]]
        kwargs = {"dest": flag["dest"]}
        if flag["action"] == "help":
            continue  # argparse's own -h/--help
        if flag["action"] == "store_true":
            parser.add_argument(*options, action="store_true", **kwargs)
            continue
        if flag["action"] == "boolean_optional":
            parser.add_argument(*options, action=argparse.BooleanOptionalAction, default=None, **kwargs)
            continue
        if flag["action"] == "append":
            kwargs["action"] = "append"
        kwargs["type"] = human_readable_int if flag["human_readable"] else TYPES[flag["type"]]
        if flag["nargs"] not in (None, 0):
            kwargs["nargs"] = flag["nargs"]
        if flag["choices"] is not None:
            kwargs["choices"] = flag["choices"]
        parser.add_argument(*options, **kwargs)
    return parser


def validate_parsed_serve_args(args):
    """Quick checks for model serve args that raise prior to loading."""
    if hasattr(args, "subparser") and args.subparser != "serve":
        return
    # Enable auto tool needs a tool call parser to be valid
    if args.enable_auto_tool_choice and not args.tool_call_parser:
        raise TypeError("Error: --enable-auto-tool-choice requires --tool-call-parser")
    if args.enable_log_outputs and not args.enable_log_requests:
        raise TypeError("Error: --enable-log-outputs requires --enable-log-requests")
