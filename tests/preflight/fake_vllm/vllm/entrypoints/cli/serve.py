"""The `serve` subcommand (vllm/entrypoints/cli/serve.py): the parser, the validation, and `cmd`
with v0.19.1's checks and choice of launcher (its gRPC and elastic-EP branches left out). The
launchers fail loudly: the engine check must never start one. The fake parser has no defaults, so
`cmd` reads vLLM's own (data_parallel_size 1, the load-balancing flags off) where a flag is unset."""

import asyncio as uvloop  # v0.19.1 imports uvloop; asyncio.run has its `run`

from vllm.entrypoints.openai.api_server import run_server, setup_server  # noqa: F401 - as serve.py imports them
from vllm.entrypoints.openai.cli_args import make_arg_parser, validate_parsed_serve_args


class ServeSubcommand:
    name = "serve"

    @staticmethod
    def cmd(args):
        if hasattr(args, "model_tag") and args.model_tag is not None:
            args.model = args.model_tag
        if args.headless:
            if args.api_server_count is not None and args.api_server_count > 0:
                raise ValueError(
                    f"--api-server-count={args.api_server_count} cannot be "
                    "used with --headless (no API servers are started in "
                    "headless mode)."
                )
            args.api_server_count = 0
        is_external_lb = bool(args.data_parallel_external_lb) or args.data_parallel_rank is not None
        is_hybrid_lb = bool(args.data_parallel_hybrid_lb) or args.data_parallel_start_rank is not None
        if is_external_lb and is_hybrid_lb:
            raise ValueError(
                "Cannot use both external and hybrid data parallel load "
                "balancing modes. External LB is enabled via "
                "--data-parallel-external-lb or --data-parallel-rank. "
                "Hybrid LB is enabled via --data-parallel-hybrid-lb or "
                "--data-parallel-start-rank. Use one mode or the other."
            )
        if args.api_server_count is None:
            if is_external_lb:
                args.api_server_count = 1
            elif is_hybrid_lb:
                args.api_server_count = args.data_parallel_size_local or 1
            else:
                args.api_server_count = args.data_parallel_size or 1
        if args.api_server_count < 1:
            run_headless(args)
        elif args.api_server_count > 1:
            run_multi_api_server(args)
        else:
            args.api_server_count = None
            uvloop.run(run_server(args))

    def validate(self, args):
        validate_parsed_serve_args(args)

    def subparser_init(self, subparsers):
        serve_parser = subparsers.add_parser(self.name, usage="vllm serve [model_tag] [options]")
        return make_arg_parser(serve_parser)


def cmd_init():
    return [ServeSubcommand()]


def run_headless(args):
    raise RuntimeError("the engine check started vllm serve's headless launcher")


def run_multi_api_server(args):
    raise RuntimeError("the engine check started vllm serve's API servers")
