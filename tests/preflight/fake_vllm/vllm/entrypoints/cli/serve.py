"""The `serve` subcommand (vllm/entrypoints/cli/serve.py)."""

from vllm.entrypoints.openai.cli_args import make_arg_parser, validate_parsed_serve_args


class ServeSubcommand:
    name = "serve"

    def validate(self, args):
        validate_parsed_serve_args(args)

    def subparser_init(self, subparsers):
        serve_parser = subparsers.add_parser(self.name, usage="vllm serve [model_tag] [options]")
        return make_arg_parser(serve_parser)


def cmd_init():
    return [ServeSubcommand()]
