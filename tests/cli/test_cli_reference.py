"""docs/cli-reference.md says what `vllm-stack VERB --help` says: every verb, every argument, its
placeholder and its help text, word for word. A help text reworded, a flag added or a placeholder
renamed without the page written again (`make cli-reference`) fails here, so the page a user reads
before typing a command never drifts from the tool."""

from __future__ import annotations

import argparse
import difflib

from tests.paths import ROOT
from tools.cli_reference import PAGE, reference
from vllm_serving.cli import build_parser
from vllm_serving.cli.verbs import VERBS


def test_the_reference_page_is_the_parsers_own() -> None:
    page = PAGE.read_text(encoding="utf-8")
    written = reference()
    diff = "".join(difflib.unified_diff(page.splitlines(True), written.splitlines(True),
                                        "docs/cli-reference.md", "from the parser"))
    assert page == written, f"docs/cli-reference.md is out of date: run `make cli-reference`\n{diff}"


def test_the_page_lists_every_verb_and_every_help_text() -> None:
    # read against argparse's own --help output, not the generator: a help text the generator
    # dropped or changed would pass the test above and fail here
    page = " ".join(PAGE.read_text(encoding="utf-8").split()).replace("\\|", "|")
    parser = build_parser()
    verbs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for verb in VERBS:
        assert f"## {verb}" in page
        for action in verbs[verb]._actions:
            if action.help and not isinstance(action, argparse._HelpAction):
                assert " ".join(action.help.split()) in page, (verb, action.option_strings, action.help)
        for option in (s for a in verbs[verb]._actions for s in a.option_strings if s not in ("-h", "--help")):
            assert f"`{option}" in page or f", {option}" in page, (verb, option)


def test_the_guide_links_the_reference() -> None:
    assert "(cli-reference.md)" in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
