"""A tag the project has no registry for (e.g. v0.11.2-v0.16.0, or a release newer than the last
registry) is checked through `CANDIDATES`: every place a recorded release had an entry point must be
among them, or such a tag would report the step as not run where vLLM has it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.paths import ROOT
from vllm_serving.preflight.in_image.vllm_calls import CANDIDATES

RELEASES = sorted((ROOT / "vllm_serving" / "engine" / "releases").glob("v*.json"))


@pytest.mark.parametrize("registry", RELEASES, ids=lambda p: p.stem)
def test_every_recorded_entry_point_is_a_candidate(registry: Path) -> None:
    calls = json.loads(registry.read_text())["preflight_entry_points"]["calls"]
    assert set(calls) <= set(CANDIDATES)
    assert {name: spec for name, spec in calls.items() if spec not in CANDIDATES[name]} == {}


def _version(registry: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in registry.stem.removeprefix("v").split("."))


@pytest.mark.parametrize("registry", RELEASES, ids=lambda p: p.stem)
def test_the_logging_step_is_recorded_where_vllm_serve_calls_it(registry: Path) -> None:
    """v0.31+ cli/main.py calls `configure_logging_from_args(args)` between parsing and validating:
    the in-image check finds it where the registry recorded it; before v0.31 there is none."""
    calls = json.loads(registry.read_text())["preflight_entry_points"]["calls"]
    expected = "vllm.logger:configure_logging_from_args" if _version(registry) >= (0, 31) else None
    assert calls.get("logging_setup") == expected
