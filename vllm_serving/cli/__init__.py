"""`vllm-stack`: offline views of the stacks; needs no Pulumi CLI, backend or credentials."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from vllm_serving.findings import ConfigError
from vllm_serving.terminal_text import EscapingStream

# Each subcommand lives in its own module with `register(subparsers)`.
COMMANDS = ("init", "plan", "check", "capacity", "render", "catalogs", "diff", "affected", "smoke", "calibrate")
DISTRIBUTION = "vllm-serving"
"""The project's name in pyproject.toml: `--version` reads its installed metadata."""


def version() -> str:
    # importlib.metadata takes ~25 ms to import: only `--version` pays for it
    import importlib.metadata  # noqa: PLC0415

    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


class _VersionAction(argparse.Action):
    """`--version`: looked up only when asked (reading the package metadata takes ~40 ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the installed version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vllm-stack",
        description="Plan, check and render vLLM deployments from the Pulumi stack files, offline.",
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("--project-dir", type=Path, default=Path.cwd(),
                        help="directory holding Pulumi.yaml and the stack files (default: .)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one verb; whatever it prints reaches the terminal with control characters escaped
    (a value from a file, a file name or an argument may hold any)."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(streams[0]), EscapingStream(streams[1])
    try:
        return _run(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _run(argv: Sequence[str] | None) -> int:
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
