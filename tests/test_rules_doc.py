"""docs/rules.md has one row per rule, identical to the rule table (regenerate: see the doc), and
the docs' client examples switch thinking the way vLLM reads it."""

from __future__ import annotations

import re

from tests.paths import ROOT
from vllm_serving.engine.release_sources import releases_table, sources_table
from vllm_serving.rules import RULES
from vllm_serving.rules.docs import RELEASES_END, RELEASES_START, SOURCES_END, SOURCES_START, rules_table, table_in

DOC = ROOT / "docs" / "rules.md"
FENCED = re.compile(r"```[^\n]*\n(.*?)```", re.S)


def test_doc_table_matches_rules() -> None:
    table = table_in(DOC.read_text(encoding="utf-8"))
    assert table == rules_table(), "docs/rules.md is stale: uv run python -m vllm_serving.rules.docs"


def test_one_row_per_rule() -> None:
    rows = [line for line in table_in(DOC.read_text(encoding="utf-8")).splitlines()[2:]]
    assert [row.split("`")[1] for row in rows] == [rule.code for rule in RULES]
    for row, rule in zip(rows, RULES, strict=True):
        assert f"| {rule.severity.value} |" in row


def test_doc_cites_nothing_outside_the_repository() -> None:
    assert "vllm-facts" not in DOC.read_text(encoding="utf-8")


def test_client_examples_switch_thinking_with_the_chat_template() -> None:
    """Qwen3's template reads chat_template_kwargs.enable_thinking; vLLM ignores a `thinking` field."""
    blocks = [b for p in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
              for b in FENCED.findall(p.read_text(encoding="utf-8"))]
    assert [b for b in blocks if re.search(r'"thinking"\s*:', b)] == []
    assert any('"chat_template_kwargs": {"enable_thinking": false}' in b for b in blocks)


def test_doc_names_each_facts_source_per_release() -> None:
    """The two release tables are the registries' own `source` fields (regenerate with the rules table)."""
    doc = DOC.read_text(encoding="utf-8")
    assert table_in(doc, SOURCES_START, SOURCES_END) == sources_table()
    assert table_in(doc, RELEASES_START, RELEASES_END) == releases_table()
    assert "| v0.19.1 | vllm-0.19.1-" in doc and "| backend auto-selection order (CUDA) | vllm/platforms/cuda.py" in doc
