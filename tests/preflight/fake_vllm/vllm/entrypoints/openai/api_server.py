"""validate_api_server_args (vllm/entrypoints/openai/api_server.py); the parser names are the
registry's record of v0.19.1's registrations."""

from vllm import RELEASE


def validate_api_server_args(args):
    valid_tool_parses = list(RELEASE["tool_parsers"])
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
