"""The engine model decides as pulumi's step generator does, on the cases pulumi's own tests pin
(pkg/resource/deploy/step_generator_test.go v3.259.0 `TestApplyReplaceOnChangesEmptyDetailedDiff`,
`TestProcessIgnoreChanges`) and on the source lines cited, so a scenario cannot pass on a model that
drifted from the engine."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scenario.engine import Engine
from tests.scenario.state import INIT_ERROR, Diff, Entry, Goal, InitError, apply_replace_on_changes, reset_ignored

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


def test_an_ignored_path_takes_the_old_inputs_value_for_the_diff() -> None:
    old = {"logOpts": {"max-size": "100m", "mode": "non-blocking"}, "ports": [8000]}
    new = {"logOpts": {"max-size": "500m"}, "ports": [9000]}
    assert reset_ignored(new, old, ("logOpts.mode", "ports")) == {
        "logOpts": {"max-size": "500m", "mode": "non-blocking"}, "ports": [8000]}
    assert reset_ignored(new, old, ("logOpts",)) == {"logOpts": old["logOpts"], "ports": [9000]}
    assert reset_ignored(new, {"logOpts": {}}, ("logOpts.compress",)) == new  # absent in both: nothing


class _Recorder:
    """A provider that replaces on any change of `size`, records what it was asked to create, and
    whose Read reports no init error (as the Terraform bridge's never does)."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []

    def create(self, goal: Goal, config: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self.created.append(dict(goal.inputs))
        if goal.inputs.get("broken"):
            raise InitError("not ready", f"id{len(self.created)}", dict(goal.inputs))
        return f"id{len(self.created)}", dict(goal.inputs)

    def diff(self, old: Entry, goal: Goal) -> Diff:
        changed = [k for k in sorted(set(old.inputs) | set(goal.inputs)) if old.inputs.get(k) != goal.inputs.get(k)]
        return Diff(changed, [k for k in changed if k == "size"])

    def update(self, old: Entry, goal: Goal, config: dict[str, Any]) -> dict[str, Any]:
        return dict(goal.inputs)

    def delete(self, entry: Entry, config: dict[str, Any]) -> None:
        pass

    def read(self, entry: Entry, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
        return dict(entry.outputs), dict(entry.inputs)

    def get(self, type_: str, ident: str, config: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("no read resource here")

    def config_replaces(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        return False


def _goal(inputs: dict[str, Any], ignore: tuple[str, ...] = (), replace_on: tuple[str, ...] = ()) -> Goal:
    return Goal("urn:res", "test:index:Res", "res", inputs, "", False, False, None, ignore, replace_on)


def test_a_replacement_is_created_from_the_programs_values_ignore_changes_notwithstanding() -> None:
    # step_generator.go lines 2004-2023: a replacement's inputs are checked again from the program's
    # (goal.Properties), not from the ignore-processed ones the diff used
    provider = _Recorder()
    engine = Engine({"test": provider})
    engine.register(_goal({"size": 1, "opts": {"max-size": "100m"}}, ignore=("opts",)))
    engine.register(_goal({"size": 1, "opts": {"max-size": "500m"}}, ignore=("opts",)))
    assert len(provider.created) == 1  # ignored: no diff
    engine.register(_goal({"size": 2, "opts": {"max-size": "500m"}}, ignore=("opts",)))
    assert provider.created[-1] == {"size": 2, "opts": {"max-size": "500m"}}


def test_a_refresh_stores_the_init_errors_the_providers_read_reports_and_so_clears_them() -> None:
    # step.go lines 1579-1642: `s.new.InitErrors = initErrors`, nil unless Read returned an init error
    provider = _Recorder()
    engine = Engine({"test": provider})
    with pytest.raises(InitError):
        engine.register(_goal({"size": 1, "broken": True}, replace_on=(INIT_ERROR,)))
    assert engine.entry("res").init_errors
    engine.refresh()
    assert not engine.entry("res").init_errors
    engine.register(_goal({"size": 1, "broken": True}, replace_on=(INIT_ERROR,)))  # nothing to replace now
    assert len(provider.created) == 1
