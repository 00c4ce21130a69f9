"""A stack file is bounded in the work its problems cost: at most MAX_FINDINGS are worked out in
full (each a close-match search) and the rest counted in one finding, and a stack takes at most
MAX_WAIVERS waivers. A pasted file of 12,000 unknown keys took `check` 17 s of CPU; 6,000 unknown
waiver codes, 2.5 s."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from tests.paths import PROJECT_DIR
from tests.stack_builders import stack_values
from vllm_serving.findings import ConfigError, Finding
from vllm_serving.rules.every_error import every_finding, stack_build
from vllm_serving.settings import stack_config
from vllm_serving.settings.stack_config import MAX_FINDINGS, parse_stack_config
from vllm_serving.settings.waivers import MAX_WAIVERS


def _problems(values: dict[str, Any]) -> list[Finding]:
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values)
    return list(caught.value.findings)


def _unknown_keys(count: int) -> dict[str, Any]:
    return stack_values("v100", network={f"k{i:05d}x": 1 for i in range(count)})


def test_thousands_of_problems_are_worked_out_for_the_first_fifty_and_counted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    searches: list[str] = []
    real = difflib.get_close_matches
    monkeypatch.setattr(stack_config.difflib, "get_close_matches",
                        lambda word, *a, **k: searches.append(word) or real(word, *a, **k))
    found = _problems(_unknown_keys(12_000))
    assert [f.code for f in found] == ["config-unknown-key"] * MAX_FINDINGS + ["config-too-many-problems"]
    assert found[-1].message == f"and {12_000 - MAX_FINDINGS} more problems past the first {MAX_FINDINGS}"
    assert len(searches) <= MAX_FINDINGS


def test_unknown_top_level_keys_count_towards_the_cap() -> None:
    values = stack_values("v100") | {f"vllm-serving:x{i}": 1 for i in range(MAX_FINDINGS + 7)}
    found = _problems(values)
    assert len(found) == MAX_FINDINGS + 1
    assert found[-1].message.startswith("and 7 more problems")


def test_as_many_problems_as_the_cap_are_all_reported_in_full() -> None:
    # boundary twin: no summary until there is something past the cap
    found = _problems(_unknown_keys(MAX_FINDINGS))
    assert [f.code for f in found] == ["config-unknown-key"] * MAX_FINDINGS


def test_every_finding_does_not_build_a_stack_of_too_many_problems_again() -> None:
    found = every_finding(_unknown_keys(500), stack_build(frozenset(), "v100", PROJECT_DIR))
    assert len(found) == MAX_FINDINGS + 1 and found[-1].code == "config-too-many-problems"


def _waivers(count: int) -> dict[str, Any]:
    values = stack_values("v100")
    values["vllm-serving:waivers"] = [{"code": f"no-such-code-{i}", "reason": "r"} for i in range(count)]
    return values


def test_more_waivers_than_the_cap_are_refused_naming_the_key() -> None:
    found = _problems(_waivers(MAX_WAIVERS + 1))
    assert [(f.code, f.key) for f in found] == [("config-invalid", "vllm-serving:waivers")]
    assert f"keep at most {MAX_WAIVERS}" in found[0].fix


def test_as_many_waivers_as_the_cap_are_read() -> None:
    settings = parse_stack_config(_waivers(MAX_WAIVERS))
    assert len(settings.waivers) == MAX_WAIVERS
