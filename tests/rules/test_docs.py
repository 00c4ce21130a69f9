"""docs.py: the rules table it writes into docs/rules.md."""

from __future__ import annotations

from pathlib import Path

from vllm_serving.rules.docs import END, START, _cell, rules_table, table_in, update


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
