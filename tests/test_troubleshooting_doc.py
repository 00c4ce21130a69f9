"""docs/troubleshooting.md: every row points to something that exists - a rule code, a preflight check or a
smoke check - and every preflight and smoke check is there, so a symptom never points at nothing."""

from __future__ import annotations

import re

from tests.paths import ROOT
from vllm_serving.preflight.in_image.main import CHECKS as PREFLIGHT_CHECKS
from vllm_serving.rules import RULES
from vllm_serving.smoke.checks import CHECKS as SMOKE_CHECKS

DOC = ROOT / "docs" / "troubleshooting.md"
REFERENCE = re.compile(r"\b(rule|preflight|smoke) `([a-z0-9-]+)`")
KNOWN = {
    "rule": {rule.code for rule in RULES},
    "preflight": set(PREFLIGHT_CHECKS),
    "smoke": {check.name for check in SMOKE_CHECKS},
}


def _symptom_rows() -> list[str]:
    """The rows of the symptom tables (four columns: symptom, advice, correction, caught by)."""
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    return [row for row in rows if row.count(" | ") == 3 and not row.startswith("| symptom")]


def test_every_reference_exists() -> None:
    found = REFERENCE.findall(DOC.read_text(encoding="utf-8"))
    unknown = [f"{kind} `{name}`" for kind, name in found if name not in KNOWN[kind]]
    assert found and not unknown, unknown


def test_every_symptom_says_what_catches_it() -> None:
    rows = _symptom_rows()
    assert len(rows) >= 15  # both seeds' tables, with the pitfalls of their commands
    for row in rows:
        assert REFERENCE.search(row.rsplit(" | ", 1)[1]), f"nothing catches: {row[:80]}"


def test_every_preflight_and_smoke_check_is_listed() -> None:
    used = {(kind, name) for kind, name in REFERENCE.findall(DOC.read_text(encoding="utf-8"))}
    for kind in ("preflight", "smoke"):
        assert {name for k, name in used if k == kind} == KNOWN[kind], kind


def test_the_readme_links_it() -> None:
    assert "docs/troubleshooting.md" in (ROOT / "README.md").read_text(encoding="utf-8")
