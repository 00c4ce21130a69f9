"""The engine model decides as pulumi's step generator does, on the cases pulumi's own tests pin
(pkg/resource/deploy/step_generator_test.go v3.259.0 `TestApplyReplaceOnChangesEmptyDetailedDiff`,
`TestProcessIgnoreChanges`), so a scenario cannot pass on a model that drifted from the engine."""

from __future__ import annotations

import pytest

from tests.scenario.state import INIT_ERROR, Diff, apply_replace_on_changes, reset_ignored

# (diff's changed keys, replaceOnChanges, old state has init errors) -> replaced keys
REPLACE_ON_CHANGES = [
    ((), (), False, []),
    (("a",), (), False, []),
    (("a",), ("a",), False, ["a"]),
    ((), (), True, []),  # an init error alone: no replacement (the empty update)
    (("a",), (), True, []),
    (("a",), ("a",), True, ["a"]),
    ((), ("*",), True, [INIT_ERROR]),  # the engine test's own case
    ((), (INIT_ERROR,), True, [INIT_ERROR]),  # what VllmServer lists
    ((), ("healthcheck",), True, []),
]


@pytest.mark.parametrize(("changed", "paths", "init_errors", "replaced"), REPLACE_ON_CHANGES)
def test_replace_on_changes_as_the_engine_applies_it(changed: tuple[str, ...], paths: tuple[str, ...],
                                                     init_errors: bool, replaced: list[str]) -> None:
    assert apply_replace_on_changes(Diff(list(changed)), paths, init_errors).replace == replaced


def test_an_ignored_path_takes_the_old_value_even_for_a_replacement() -> None:
    old = {"logOpts": {"max-size": "100m", "mode": "non-blocking"}, "ports": [8000]}
    new = {"logOpts": {"max-size": "500m"}, "ports": [9000]}
    assert reset_ignored(new, old, ("logOpts.mode", "ports")) == {
        "logOpts": {"max-size": "500m", "mode": "non-blocking"}, "ports": [8000]}
    assert reset_ignored(new, old, ("logOpts",)) == {"logOpts": old["logOpts"], "ports": [9000]}
    assert reset_ignored(new, {"logOpts": {}}, ("logOpts.compress",)) == new  # absent in both: nothing
