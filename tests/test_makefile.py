"""The Makefile is a newcomer's menu: `make` lists every target from its `## make ...` lines, each
target the README and docs name exists and is listed, and a slow target says what it is doing."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.paths import DOCS, ROOT

MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
TARGET = re.compile(r"^([a-z][a-z-]*):", re.MULTILINE)
LISTED = set(re.findall(r"^## (?:make [a-z][a-z-]*[^:\n]*?; )?make ([a-z][a-z-]*)", MAKEFILE, re.MULTILINE))
LISTED |= set(re.findall(r"; make ([a-z][a-z-]*):", MAKEFILE))
# Targets that run for more than two seconds: each recipe's first line says what it does.
SLOW = ("pytest", "typecheck", "lint", "test-docker", "bench", "mutation")


def _recipe(target: str) -> list[str]:
    """The recipe's lines (those starting with a tab after `target:`)."""
    after = MAKEFILE[MAKEFILE.index(f"\n{target}:") + 1:].splitlines()[1:]
    recipe = []
    for line in after:
        if not line.startswith("\t"):
            break
        recipe.append(line)
    return recipe


def test_every_target_is_listed_by_make_help() -> None:
    assert set(TARGET.findall(MAKEFILE)) <= LISTED


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_alone_prints_the_list() -> None:
    done = subprocess.run(["make", "-s", "-C", str(ROOT)], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    assert {line.split()[1].rstrip(":") for line in done.stdout.splitlines() if line.startswith("make ")} >= {
        "help", "test", "demo", "plan", "check", "env"}


def test_every_make_command_the_docs_name_exists() -> None:
    texts = [(ROOT / "README.md").read_text(encoding="utf-8"), *(p.read_text(encoding="utf-8")
                                                                 for p in sorted(DOCS.glob("*.md")))]
    named = {m for text in texts for m in re.findall(r"`make ([a-z][a-z-]*)", text)}
    assert named and named <= LISTED


@pytest.mark.parametrize("target", SLOW)
def test_a_slow_target_says_what_it_is_doing_first(target: str) -> None:
    assert _recipe(target)[0].startswith('\t@echo "make: '), target


def test_the_first_run_says_it_is_installing() -> None:
    """uv and the environment are made on first use, each with a line (they take 10-60 s)."""
    for rule in ("$(TOOLS)/bin/uv:", "$(SYNCED):"):
        first = MAKEFILE[MAKEFILE.index(rule):].splitlines()[1]
        assert first.startswith('\t@echo "make: '), rule
