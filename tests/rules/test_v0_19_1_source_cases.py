"""The independent set (v0_19_1_source_cases.py): stacks written against vLLM v0.19.1's source,
each decided as vLLM decides it. A stack vLLM refuses must raise an ERROR naming one of the
reasons the case gives; a stack vLLM starts must raise no ERROR at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.paths import PROJECT, PROJECT_DIR
from tests.rules.v0_19_1_source_cases import BASE, CASES, REFUSES, STARTS, Case
from tests.stack_builders import _merge
from vllm_serving import rules
from vllm_serving.findings import Severity
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import resolve
from vllm_serving.stack_files.loader import project_defaults

CONFIG_NAME = "config.json"


def _errors(case: Case, tmp_path: Path) -> list[str]:
    sections: dict[str, Any] = _merge(BASE, case.stack)
    if case.config is not None:
        base, keys = case.config
        config = {**json.loads(Path(base).read_text(encoding="utf-8")), **keys}
        (tmp_path / CONFIG_NAME).write_text(json.dumps(config), encoding="utf-8")
        sections["model"] = {**{k: v for k, v in sections["model"].items() if k != "name"},
                             "configFile": CONFIG_NAME}
    values = {**project_defaults(PROJECT_DIR), **{f"{PROJECT}:{k}": v for k, v in sections.items()}}
    spec = resolve(parse_stack_config(values, set()), "case", project_dir=tmp_path)
    return [f"{f.code}: {f.message}" for f in rules.check(spec) if f.severity is Severity.ERROR]


def test_the_set_is_large_and_twinned() -> None:
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.expect for c in CASES} == {REFUSES, STARTS}
    assert all(c.codes for c in CASES if c.expect == REFUSES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_decided_as_v0_19_1_decides(case: Case, tmp_path: Path) -> None:
    errors = _errors(case, tmp_path)
    if case.expect == STARTS:
        assert errors == [], f"vLLM starts it ({case.source})"
    else:
        assert any(e.split(":")[0] in case.codes for e in errors), \
            f"vLLM refuses it ({case.source}); expected one of {case.codes}, got {errors}"
