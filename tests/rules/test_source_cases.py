"""The independent sets (v<release>_source_cases.py): stacks written against one vLLM release's
source, each decided as that release decides it. A stack vLLM refuses must raise an ERROR naming
one of the reasons the case gives; a stack vLLM starts must raise no ERROR at all. One runner for
every release: each set brings its own BASE (its `image.tag`) and its cases."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.paths import PROJECT, PROJECT_DIR
from tests.rules import v0_19_1_source_cases, v0_34_0_source_cases
from tests.rules.v0_19_1_source_cases import REFUSES, STARTS, Case
from tests.stack_builders import _merge
from vllm_serving import rules
from vllm_serving.findings import Severity
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import resolve
from vllm_serving.stack_files.loader import project_defaults

CONFIG_NAME = "config.json"
SETS: dict[str, ModuleType] = {"v0.19.1": v0_19_1_source_cases, "v0.34.0": v0_34_0_source_cases}
RUNS = [pytest.param(release, c, id=f"{release}/{c.id}", marks=c.marks)
        for release, cases in SETS.items() for c in cases.CASES]


def _errors(base: dict[str, Any], case: Case, tmp_path: Path) -> list[str]:
    sections: dict[str, Any] = _merge(base, case.stack)
    if case.config is not None:
        config_base, keys = case.config
        config = {**json.loads(Path(config_base).read_text(encoding="utf-8")), **keys}
        (tmp_path / CONFIG_NAME).write_text(json.dumps(config), encoding="utf-8")
        sections["model"] = {**{k: v for k, v in sections["model"].items() if k != "name"},
                             "configFile": CONFIG_NAME}
    values = {**project_defaults(PROJECT_DIR), **{f"{PROJECT}:{k}": v for k, v in sections.items()}}
    spec = resolve(parse_stack_config(values, set()), "case", project_dir=tmp_path)
    return [f"{f.code}: {f.message}" for f in rules.check(spec) if f.severity is Severity.ERROR]


@pytest.mark.parametrize("release", SETS)
def test_each_set_is_large_and_twinned(release: str) -> None:
    cases = SETS[release].CASES
    assert len(cases) >= 50
    assert SETS[release].BASE["image"]["tag"] == release
    assert len({c.id for c in cases}) == len(cases)
    assert {c.expect for c in cases} == {REFUSES, STARTS}
    assert all(c.codes for c in cases if c.expect == REFUSES)


@pytest.mark.parametrize(("release", "case"), RUNS)
def test_decided_as_the_release_decides(release: str, case: Case, tmp_path: Path) -> None:
    errors = _errors(SETS[release].BASE, case, tmp_path)
    if case.expect == STARTS:
        assert errors == [], f"vLLM {release} starts it ({case.source})"
    else:
        assert any(e.split(":")[0] in case.codes for e in errors), \
            f"vLLM {release} refuses it ({case.source}); expected one of {case.codes}, got {errors}"
