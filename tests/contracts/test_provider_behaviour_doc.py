"""docs/provider-behaviour.md names, for each provider behaviour, the test that guards it: each exists."""

from __future__ import annotations

import ast
import re

from tests.paths import DOCS, ROOT
from tests.python_source import parse_source

DOC = (DOCS / "provider-behaviour.md").read_text(encoding="utf-8")
# `tests/x/test_y.py::test_z`, or `::test_z` for the file named last before it
CITATION = re.compile(r"`(tests/[\w/]+\.py)?::(test_\w+)`")


def _tests_in(path: str) -> set[str]:
    tree = parse_source(ROOT / path)
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def test_every_guarding_test_named_in_the_doc_exists() -> None:
    cited: list[tuple[str, str]] = []
    current = ""
    for match in CITATION.finditer(DOC):
        current = match.group(1) or current
        assert current, f"{match.group(0)} names no file before it"
        cited.append((current, match.group(2)))
    assert len(cited) >= 10
    missing = [f"{path}::{name}" for path, name in cited
               if not (ROOT / path).exists() or name not in _tests_in(path)]
    assert missing == []
