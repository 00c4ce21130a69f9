"""engine.extraArgs is bounded: a hostile list is refused while the settings load, and a list
within the cap costs at most a fixed number of fuzzy matches (thousands took 40 s)."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from tests.stack_builders import make_spec, stack_values
from vllm_serving import rules
from vllm_serving.engine import extra_args
from vllm_serving.findings import ConfigError
from vllm_serving.settings.engine import MAX_EXTRA_ARG_CHARS, MAX_EXTRA_ARGS
from vllm_serving.settings.stack_config import parse_stack_config


def _keys(items: list[str]) -> dict[str, str]:
    try:
        parse_stack_config(stack_values("v100", engine={"extraArgs": items}))
    except ConfigError as exc:
        return {f.key: f"{f.message} - {f.fix}" for f in exc.findings}
    return {}


def test_more_items_than_the_cap_are_refused_naming_the_key() -> None:
    assert _keys(["--enforce-eager"] * MAX_EXTRA_ARGS) == {}
    found = _keys(["--enforce-eager"] * (MAX_EXTRA_ARGS + 1))
    assert list(found) == ["vllm-serving:engine.extraArgs"]
    assert f"at most {MAX_EXTRA_ARGS}" in found["vllm-serving:engine.extraArgs"]


def test_an_item_past_the_size_cap_is_refused_naming_it() -> None:
    found = _keys(["--enforce-eager", "--x=" + "y" * MAX_EXTRA_ARG_CHARS])
    assert list(found) == ["vllm-serving:engine.extraArgs[1]"]


def test_fuzzy_matching_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    real = difflib.get_close_matches

    def counted(*args: Any, **kwargs: Any) -> list[str]:
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(extra_args.difflib, "get_close_matches", counted)
    unknown = [f"--no-such-flag-{i:03d}" for i in range(MAX_EXTRA_ARGS - 2)] + ["--" + "z" * 200, "--enforce-eagr"]
    found = [f for f in rules.check(make_spec("v100", engine={"extraArgs": unknown})) if f.code == "extra-arg-unknown"]
    assert len(found) == len(unknown)  # every item is still named
    assert len(calls) <= extra_args.MAX_SUGGESTIONS
    assert "z" * 200 not in calls and all(len(c) <= extra_args.MAX_SUGGESTED_LENGTH for c in calls)
