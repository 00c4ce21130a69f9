"""`vllm-stack`: offline views of the stacks; needs no Pulumi CLI, backend or credentials."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from vllm_serving.findings import ConfigError

# Each subcommand lives in its own module with `register(subparsers)`.
COMMANDS = ("plan", "check", "capacity", "render", "catalogs", "diff", "affected", "smoke")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vllm-stack",
        description="Plan, check and render vLLM deployments from the Pulumi stack files, offline.",
    )
    parser.add_argument("--project-dir", type=Path, default=Path.cwd(),
                        help="directory holding Pulumi.yaml and the stack files (default: .)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except ConfigError as exc:
        for finding in exc.findings:
            print(finding.line(), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except Exception as exc:  # an operator tool prints one line, never a traceback
        print(f"vllm-stack: internal error: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
