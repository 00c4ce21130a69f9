"""docs/rules.md's table from the rule table, so the two cannot drift (a test compares them).

Regenerate the table with: `uv run python -m vllm_serving.rules.docs docs/rules.md`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vllm_serving.engine.release_sources import releases_table, sources_table
from vllm_serving.finding_codes import STAGE_CODES, UNWAIVABLE
from vllm_serving.rules import GUARDS, RULES

START = "<!-- rules:start (generated from vllm_serving/rules; do not edit by hand) -->"
END = "<!-- rules:end -->"
STAGE_START = "<!-- stage-codes:start (generated from vllm_serving/finding_codes.py; do not edit by hand) -->"
STAGE_END = "<!-- stage-codes:end -->"
UNWAIVABLE_START = "<!-- unwaivable:start (generated from the guards of the code tables; do not edit by hand) -->"
UNWAIVABLE_END = "<!-- unwaivable:end -->"
SOURCES_START = "<!-- release-sources:start (generated from the release registries; do not edit by hand) -->"
SOURCES_END = "<!-- release-sources:end -->"
RELEASES_START = "<!-- releases:start (generated from the release registries; do not edit by hand) -->"
RELEASES_END = "<!-- releases:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rules_table() -> str:
    """The Markdown table: one row per rule, in the registry's order."""
    lines = ["| code | severity | what | why | source |", "|---|---|---|---|---|"]
    for rule in RULES:
        cells = (f"`{rule.code}`", rule.severity.value, rule.what, rule.why, rule.source)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def stage_codes_table() -> str:
    """The Markdown table of the codes raised before the rules run, in the stages' order."""
    lines = ["| code | stage | what |", "|---|---|---|"]
    for code, entry in STAGE_CODES.items():
        lines.append(f"| `{code}` | {entry.stage} | {_cell(entry.what)} |")
    return "\n".join(lines)


def unwaivable_table() -> str:
    """The Markdown table of what no waiver passes: per concern, why, and its codes."""
    lines = ["| guards | why no waiver passes it | codes |", "|---|---|---|"]
    for concern, why in UNWAIVABLE.items():
        codes = ", ".join(f"`{code}`" for code, guards in GUARDS.items() if guards == concern)
        lines.append(f"| {concern} | {_cell(why)} | {codes} |")
    return "\n".join(lines)


def table_in(doc: str, start: str = START, end: str = END) -> str:
    """The text between the markers of a rules document."""
    return doc.split(start, 1)[1].partition(end)[0].strip()


def _replace(doc: str, start: str, end: str, table: str) -> str:
    head, rest = doc.split(start, 1)
    return f"{head}{start}\n{table}\n{end}{rest.split(end, 1)[1]}"


def update(path: Path) -> None:
    doc = path.read_text(encoding="utf-8")
    doc = _replace(doc, START, END, rules_table())
    if STAGE_START in doc:  # a document may carry the rule table alone
        doc = _replace(doc, STAGE_START, STAGE_END, stage_codes_table())
    if UNWAIVABLE_START in doc:
        doc = _replace(doc, UNWAIVABLE_START, UNWAIVABLE_END, unwaivable_table())
    if SOURCES_START in doc:
        doc = _replace(doc, SOURCES_START, SOURCES_END, sources_table())
        doc = _replace(doc, RELEASES_START, RELEASES_END, releases_table())
    path.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    update(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/rules.md"))
