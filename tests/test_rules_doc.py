"""docs/rules.md has one row per rule, identical to the rule table (regenerate: see the doc)."""

from __future__ import annotations

from pathlib import Path

from vllm_serving.rules import RULES
from vllm_serving.rules.docs import rules_table, table_in

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_doc_table_matches_rules() -> None:
    table = table_in(DOC.read_text(encoding="utf-8"))
    assert table == rules_table(), "docs/rules.md is stale: uv run python -m vllm_serving.rules.docs"


def test_one_row_per_rule() -> None:
    rows = [line for line in table_in(DOC.read_text(encoding="utf-8")).splitlines()[2:]]
    assert [row.split("`")[1] for row in rows] == [rule.code for rule in RULES]
    for row, rule in zip(rows, RULES, strict=True):
        assert f"| {rule.severity.value} |" in row
