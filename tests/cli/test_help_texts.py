"""What `vllm-stack VERB --help` shows: every verb listed with its line in `vllm-stack --help`,
every option and argument of every verb explained, and each value's placeholder written in
capitals (`--weights DIR`, `--base REF`: argparse's convention, and how docs/cli.md writes them)."""

from __future__ import annotations

import argparse

import pytest

from vllm_serving.cli import build_parser
from vllm_serving.cli.verbs import VERBS

PARSER = build_parser()
SUBCOMMANDS = next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction))
_NO_VALUE = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._HelpAction,
             argparse._VersionAction, argparse._StoreConstAction, argparse._CountAction)


def _arguments(verb: str) -> list[argparse.Action]:
    return [a for a in SUBCOMMANDS.choices[verb]._actions if not isinstance(a, argparse._HelpAction)]


def test_every_verb_is_listed_with_its_line() -> None:
    listed = {choice.dest: choice.help for choice in SUBCOMMANDS._choices_actions}
    assert set(listed) == set(VERBS)
    assert all(listed[verb] for verb in VERBS), [verb for verb in VERBS if not listed[verb]]


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_argument_of_a_verb_is_explained(verb: str) -> None:
    unexplained = [a.option_strings or [a.dest] for a in _arguments(verb) if not a.help]
    assert unexplained == []


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_value_placeholder_is_in_capitals(verb: str) -> None:
    lower = []
    for action in _arguments(verb):
        if isinstance(action, _NO_VALUE) or isinstance(action, argparse._SubParsersAction):
            continue
        shown = action.metavar if action.metavar is not None else (
            action.dest.upper() if action.option_strings else action.dest)
        if action.choices is None and (not isinstance(shown, str) or shown != shown.upper()):
            lower.append((action.option_strings or action.dest, shown))
    assert lower == []
