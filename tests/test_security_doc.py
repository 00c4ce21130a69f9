"""docs/security.md names the test that guards each control: every test it names exists."""

from __future__ import annotations

import re

from tests.paths import DOCS, ROOT

TEST_REF = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def test_every_test_the_threat_model_names_exists() -> None:
    text = (DOCS / "security.md").read_text(encoding="utf-8")
    refs = TEST_REF.findall(text)
    assert len(refs) > 20
    missing = [f"{path}::{name}" if name else path for path, name in refs
               if not (ROOT / path).is_file() or (name and f"def {name}(" not in (ROOT / path).read_text())]
    assert missing == []
