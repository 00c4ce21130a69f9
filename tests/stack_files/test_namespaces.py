"""The cheap filters before the edit distance never drop a namespace the distance would catch:
checked against the distance itself over namespaces a few edits from the project's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_serving.findings import PROJECT
from vllm_serving.stack_files import namespaces
from vllm_serving.stack_files.namespaces import MAX_EDITS, edit_distance, is_misspelt_project

_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789-_"


@st.composite
def near_project(draw: st.DrawFn) -> str:
    """The project's namespace after up to four random edits (insert, delete, substitute, swap)."""
    text = list(PROJECT)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, max(0, len(text) - 1)))
        kind = draw(st.sampled_from(["insert", "delete", "substitute", "swap"]))
        letter = draw(st.sampled_from(_LETTERS))
        if kind == "insert":
            text.insert(at, letter)
        elif kind == "delete" and text:
            del text[at]
        elif kind == "substitute" and text:
            text[at] = letter
        elif kind == "swap" and at + 1 < len(text):
            text[at], text[at + 1] = text[at + 1], text[at]
    return "".join(text)


@settings(max_examples=120, deadline=None)
@given(near_project())
def test_a_namespace_within_the_edit_budget_is_always_caught(namespace: str) -> None:
    if namespace != PROJECT and edit_distance(namespace, PROJECT) <= MAX_EDITS:
        assert is_misspelt_project(namespace)


def test_thousands_of_far_namespaces_are_filtered_before_the_distance(monkeypatch: pytest.MonkeyPatch) -> None:
    # names of the project's length but other letters never reach the quadratic distance
    calls: list[str] = []
    monkeypatch.setattr(namespaces, "edit_distance", lambda a, b: calls.append(a) or edit_distance(a, b))
    assert not any(is_misspelt_project(f"vllm-s{i:05d}") for i in range(2000))
    assert calls == []
    assert is_misspelt_project("vllm-servnig")  # boundary twin: a near one still is, through it
    assert calls == ["vllm-servnig"]


@pytest.mark.parametrize("namespace", ["vllm-seees", "vllm-sesees"])
def test_a_namespace_missing_more_letters_than_the_budget_never_reaches_the_distance(
        namespace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Near in length and in the set of letters, but without the project's second v, its r, i, n
    and g (five letters missing, three or four in excess): each edit fixes at most two of these
    eight or nine letter counts, so the counts alone say no; the missing letters count too."""
    calls: list[str] = []
    monkeypatch.setattr(namespaces, "edit_distance", lambda a, b: calls.append(a) or edit_distance(a, b))
    assert not is_misspelt_project(namespace)
    assert calls == []
