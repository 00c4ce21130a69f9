"""`make cli-reference`: docs/cli-reference.md, every verb's arguments as the parser defines them.

Written from `build_parser()` itself, as tables (not argparse's `--help` layout, which changes with
the terminal's width and the Python version), so the page says exactly what `vllm-stack VERB --help`
says. `tests/cli/test_cli_reference.py` fails when the page is out of date (it is the check).

    python -m tools.cli_reference
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vllm_serving.cli import build_parser
from vllm_serving.cli.verbs import VERBS

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "cli-reference.md"
_NO_VALUE = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction,
             argparse._CountAction, argparse._HelpAction, argparse._VersionAction)


def _cell(text: str) -> str:
    """One table cell: on one line, a `|` not taken for a column."""
    return " ".join(text.split()).replace("|", "\\|")


def _value(action: argparse.Action) -> str:
    """The value's placeholder as `--help` shows it: the metavar, the choices, or the dest in capitals."""
    if action.metavar is not None:
        shown = action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    elif action.choices is not None:
        shown = "{" + ",".join(str(choice) for choice in action.choices) + "}"
    else:
        shown = action.dest.upper() if action.option_strings else action.dest
    if action.nargs == "*":
        return f"[{shown} ...]"
    if action.nargs == "+":
        return f"{shown} [{shown} ...]"
    if action.nargs == "?":
        return f"[{shown}]"
    return shown


def _argument(action: argparse.Action) -> str:
    if not action.option_strings:
        return _value(action)
    flags = ", ".join(action.option_strings)
    return flags if isinstance(action, _NO_VALUE) or action.nargs == 0 else f"{flags} {_value(action)}"


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = action.help or ""
    if "%(" in text:  # argparse's own expansion (`%(default)s`), as `--help` prints it
        text = parser._get_formatter()._expand_help(action)
    return text


def _table(parser: argparse.ArgumentParser, heading: str) -> list[str]:
    rows = [a for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    if not rows:
        return []
    lines = [f"| {heading} | what it does |", "|---|---|"]
    lines += [f"| `{_cell(_argument(a))}` | {_cell(_help(parser, a))} |" for a in rows]
    return [*lines, ""]


def _description(parser: argparse.ArgumentParser) -> list[str]:
    text = (parser.description or "").strip("\n")
    if not text:
        return []
    if parser.formatter_class is argparse.RawDescriptionHelpFormatter:  # laid out by hand: kept as it is
        return ["```text", text, "```", ""]
    return [" ".join(text.split()), ""]


def reference() -> str:
    """The page, from the parser with every verb's arguments."""
    parser = build_parser()
    verbs: dict[str, argparse.ArgumentParser] = next(
        a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    lines = [
        "# `vllm-stack` reference",
        "",
        "<!-- Written by `make cli-reference` (tools/cli_reference.py) from the parser itself; do not",
        "     edit: tests/cli/test_cli_reference.py fails when it differs from `vllm-stack VERB --help`. -->",
        "",
        "Every verb's arguments, as `vllm-stack VERB --help` gives them; how to use them:",
        "[cli.md](cli.md). Every verb also takes `-h`, `--help`.",
        "",
        *_description(parser),
        *_table(parser, "option (before the verb)"),
        "| verb | what it does |",
        "|---|---|",
        *[f"| [`{verb}`](#{verb}) | {_cell(line)} |" for verb, (_, line) in VERBS.items()],
        "",
    ]
    for verb in VERBS:
        lines += [f"## {verb}", "", *_description(verbs[verb]), *_table(verbs[verb], "argument")]
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    PAGE.write_text(reference(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
