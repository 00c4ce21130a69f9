"""Every CLI verb prints, for every shipped stack, what is kept in tests/fixtures/cli_outputs/, and
the program registers the same resources: a refactor changes no output a user or a preview sees.

A change meant to alter output re-runs `python tests/fixtures/cli_outputs/capture.py` by hand and
commits the diff of that folder, so the review sees exactly what users will see differently.
"""

from __future__ import annotations

import pytest

from tests.fixtures.cli_outputs.capture import HERE, registered, run
from tests.fixtures.cli_outputs.cases import CASES, STACKS


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_output_is_unchanged(name: str) -> None:
    code, out, err = run(CASES[name])
    assert f"exit {code}\n--- stdout\n{out}--- stderr\n{err}" == (HERE / f"{name}.txt").read_text()


@pytest.mark.parametrize("stack", STACKS)
def test_registered_resources_are_unchanged(stack: str) -> None:
    assert registered(stack) == (HERE / f"resources.{stack}.json").read_text()
