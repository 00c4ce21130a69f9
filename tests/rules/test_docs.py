"""docs.py: the rules table it writes into docs/rules.md."""

from __future__ import annotations

from pathlib import Path

from vllm_serving.engine.release_sources import releases_table, sources_table
from vllm_serving.rules.docs import (
    END,
    RELEASES_END,
    RELEASES_START,
    SOURCES_END,
    SOURCES_START,
    STAGE_END,
    STAGE_START,
    START,
    UNWAIVABLE_END,
    UNWAIVABLE_START,
    _cell,
    rules_table,
    stage_codes_table,
    table_in,
    unwaivable_table,
    update,
)


def test_update_replaces_only_the_table(tmp_path: Path) -> None:
    doc = tmp_path / "rules.md"
    tail = f"\nafter: the markers {START} and {END} again\n"
    doc.write_text(f"# Rules\nbefore\n{START}\n| stale |\n{END}{tail}", encoding="utf-8")
    update(doc)
    text = doc.read_text(encoding="utf-8")
    assert text == f"# Rules\nbefore\n{START}\n{rules_table()}\n{END}{tail}"
    assert table_in(text) == rules_table()


def test_cells_escape_pipes_and_newlines() -> None:
    """A rule text with `|` or a line break stays one Markdown cell."""
    assert _cell("a | b\nc") == "a \\| b c"


def test_update_fills_every_generated_section_it_finds(tmp_path: Path) -> None:
    """docs/rules.md carries five generated tables; each pair of markers gets its own table and
    the hand-written text between them (non-ASCII included) stays as written."""
    sections = [(START, END, rules_table()), (STAGE_START, STAGE_END, stage_codes_table()),
                (UNWAIVABLE_START, UNWAIVABLE_END, unwaivable_table()), (SOURCES_START, SOURCES_END, sources_table()),
                (RELEASES_START, RELEASES_END, releases_table())]
    doc = tmp_path / "rules.md"
    doc.write_text("".join(f"text ≥ {n} — é\n{start}\n| old table {n} |\n{end}\n" for n, (start, end, _) in
                           enumerate(sections)), encoding="utf-8")
    update(doc)
    text = doc.read_text(encoding="utf-8")
    assert text == "".join(f"text ≥ {n} — é\n{start}\n{table}\n{end}\n" for n, (start, end, table) in
                           enumerate(sections))
    for start, end, table in sections:
        assert table_in(text, start, end) == table and "old table" not in text


def test_a_doc_with_the_rule_table_alone_gets_only_that_table(tmp_path: Path) -> None:
    doc = tmp_path / "rules.md"
    doc.write_text(f"{START}\nold\n{END}\n", encoding="utf-8")
    update(doc)
    assert doc.read_text(encoding="utf-8") == f"{START}\n{rules_table()}\n{END}\n"
