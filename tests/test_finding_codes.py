"""Every finding code the package can raise is documented: a rule's in the rule table, the others
(stack file, settings, catalog, promotion, backend objects) in vllm_serving/finding_codes.py, and
both tables in docs/rules.md."""

from __future__ import annotations

import ast
import re

from tests.paths import DOCS, ROOT
from tests.python_source import parse_source
from vllm_serving.finding_codes import STAGE_CODES
from vllm_serving.rules import RULES
from vllm_serving.rules.docs import STAGE_END, STAGE_START, stage_codes_table, table_in

CODE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")
RAISER = re.compile(r"Finding|error|Refused|finding")
# codes the rules raise outside the rule table: the apiKey value, checked by the program
DOCUMENTED_BY_HAND = {"api-key-empty", "api-key-short", "api-key-whitespace"}


def raised_codes() -> dict[str, set[str]]:
    """Kebab-case string literals passed first to a Finding-making call, with where they are."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "vllm_serving").rglob("*.py"):
        for node in ast.walk(parse_source(path)):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            value = node.args[0].value
            if RAISER.search(name) and isinstance(value, str) and CODE.match(value):
                found.setdefault(value, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_raised_code_is_in_a_table() -> None:
    known = {rule.code for rule in RULES} | STAGE_CODES.keys() | DOCUMENTED_BY_HAND
    missing = {code: where for code, where in raised_codes().items() if code not in known}
    assert not missing, f"document these in vllm_serving/finding_codes.py: {missing}"


def test_the_scan_finds_the_stages_codes() -> None:
    # the scan itself works: every stage code is raised somewhere (none is a dead entry)
    assert set(STAGE_CODES) <= set(raised_codes())


def test_docs_list_the_stage_codes() -> None:
    doc = (DOCS / "rules.md").read_text(encoding="utf-8")
    assert table_in(doc, STAGE_START, STAGE_END) == stage_codes_table(), \
        "docs/rules.md is stale: uv run python -m vllm_serving.rules.docs"
    for code in DOCUMENTED_BY_HAND:
        assert f"`{code}`" in doc
