"""docs/rules.md's table from the rule table, so the two cannot drift (a test compares them).

Regenerate the table with: `uv run python -m vllm_serving.rules.docs docs/rules.md`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vllm_serving.rules import RULES

START = "<!-- rules:start (generated from vllm_serving/rules; do not edit by hand) -->"
END = "<!-- rules:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rules_table() -> str:
    """The Markdown table: one row per rule, in the registry's order."""
    lines = ["| code | severity | what | why | source |", "|---|---|---|---|---|"]
    for rule in RULES:
        cells = (f"`{rule.code}`", rule.severity.value, rule.what, rule.why, rule.source)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def table_in(doc: str) -> str:
    """The text between the markers of a rules document."""
    return doc.split(START, 1)[1].split(END, 1)[0].strip()


def update(path: Path) -> None:
    doc = path.read_text(encoding="utf-8")
    head, rest = doc.split(START, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(f"{head}{START}\n{rules_table()}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    update(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules.md"))
