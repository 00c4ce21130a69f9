"""`vllm-stack`: offline views of the stacks; needs no Pulumi CLI, backend or credentials.

A verb loads only what it needs: `main` finds the verb in the command line and imports that
verb's module alone (cli/verbs.py lists every verb and its module); the others appear in `--help`
by name and help line only. Exit codes and errors follow cli/exits.py for every verb.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from vllm_serving.cli.exits import UNUSABLE, Unusable, error_json, exit_code, print_error
from vllm_serving.cli.verbs import VERBS
from vllm_serving.findings import ConfigError
from vllm_serving.terminal_text import EscapingStream

COMMANDS = tuple(dict.fromkeys(module for module, _ in VERBS.values()))
"""The verb modules, each with `register(subparsers)`."""
DISTRIBUTION = "vllm-serving"
"""The project's name in pyproject.toml: `--version` reads its installed metadata."""
_GLOBAL_WITH_VALUE = ("--project-dir",)


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


class Parser(argparse.ArgumentParser):
    """argparse, with a bad argument reported as JSON when the command line asks for `--json`."""

    json_errors = False

    def error(self, message: str) -> NoReturn:
        if self.json_errors:
            verb = self.prog.removeprefix("vllm-stack").strip() or None
            print(error_json(verb, message, usage=self.format_usage().strip()))
        super().error(message)  # the verb's usage and the message on stderr, exit 2


def verb_of(argv: Sequence[str]) -> str | None:
    """The verb a command line runs: its first word that is neither an option nor an option's value."""
    words = iter(argv)
    for word in words:
        if word in _GLOBAL_WITH_VALUE:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def build_parser(verb: str | None = None) -> Parser:
    """The parser, with the full arguments of `verb`'s module only (every verb without one, for
    tests and docs); the other verbs are listed by name and help line."""
    parser = Parser(
        prog="vllm-stack",
        description="Plan, check and render vLLM deployments from the Pulumi stack files, offline.",
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("--project-dir", type=Path, default=Path.cwd(), metavar="DIR",
                        help="directory holding Pulumi.yaml and the stack files (default: .)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    loaded = {VERBS[verb][0]} if verb in VERBS else set(COMMANDS) if verb is None else set()
    for name, (module, text) in VERBS.items():
        if module in loaded:
            importlib.import_module(f"{__name__}.{module}").register(sub)
            loaded.discard(module)
        elif name not in sub.choices:
            sub.add_parser(name, help=text)
    return parser


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    verb = verb_of(argv)
    parser = build_parser(verb if verb in VERBS else "")
    verbs: dict[str, argparse.ArgumentParser] = next(
        a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for each in (parser, *verbs.values()):
        if isinstance(each, Parser):
            each.json_errors = "--json" in argv
    args, extra = parser.parse_known_args(argv)
    if extra:  # the verb's own usage, not the top-level one
        verbs[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    return args


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
    args = _parse(sys.argv[1:] if argv is None else list(argv))
    verb, as_json = args.command, bool(getattr(args, "json", False))
    try:
        code: int = args.func(args)
    except Unusable as exc:
        print_error(verb, str(exc), as_json)
        return UNUSABLE
    except ConfigError as exc:
        print_error(verb, None, as_json, exc.findings)
        return exit_code(exc.findings)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # an operator tool prints one line, never a traceback
        print_error(verb, f"internal error: {exc.__class__.__name__}: {exc}", as_json)
        return UNUSABLE
    return code


if __name__ == "__main__":
    sys.exit(main())
