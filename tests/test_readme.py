"""The README is read in minutes: at most 2,500 words, a table of contents that leads somewhere,
the first hour in order, the sections other pages point at; every link of it and of docs/ lands."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.paths import DOCS, ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
LINK = re.compile(r"\]\((?!https?://|mailto:)([^)#\s]*)(?:#([^)\s]+))?\)")
MAX_WORDS = 2500


def anchors(text: str) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as '-'."""
    headings = re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_a_newcomer_reads_it_in_minutes() -> None:
    assert len(README.split()) <= MAX_WORDS


def test_the_first_hour_is_in_order() -> None:
    steps = re.findall(r"^### (\d)\. ", README, re.M)
    assert steps == [str(i) for i in range(1, len(steps) + 1)] and len(steps) >= 6
    hour = README[README.index("## The first hour"):README.index("## Capacity")]
    order = ["vllm-stack gpus", "vllm-stack init", "vllm-stack plan", "vllm-stack render", "make demo",
             "pulumi up", "curl ", "from openai import OpenAI", "pulumi destroy"]
    assert [hour.index(s) for s in order] == sorted(hour.index(s) for s in order)


@pytest.mark.parametrize("title", ["Prerequisites", "The first hour", "Capacity", "What it refuses", "License"])
def test_the_sections_other_pages_and_helpers_point_at(title: str) -> None:
    assert f"\n## {title}\n" in README
    assert f"(#{title.lower().replace(' ', '-')})" in README  # in the table of contents


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_lands(page) -> None:  # type: ignore[no-untyped-def]
    text = page.read_text(encoding="utf-8")
    for target, anchor in LINK.findall(text):
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name}: {target}"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path.read_text(encoding="utf-8")), f"{page.name}: {target}#{anchor}"


def test_every_page_of_docs_is_reachable_from_the_readme() -> None:
    linked = {target for target, _ in LINK.findall(README)}
    assert {f"docs/{p.name}" for p in DOCS.glob("*.md")} <= linked


def test_the_license_is_apache_2_as_vllms() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
