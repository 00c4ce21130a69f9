"""The emitter of init's YAML: any text, as a scalar, reads back as itself on one line; as a
comment, it adds nothing to the document - whichever YAML version reads it."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_serving.scaffold.yaml_text import comment, comment_lines, scalar

# Line breaks of YAML 1.1 (PyYAML) and 1.2 (the Pulumi CLI's yaml.v3): 1.1 also breaks at NEL, LS, PS.
LINE_BREAKS = "\r\n\x85\u2028\u2029"
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_any_text_is_one_scalar_that_reads_back_as_itself(text: str) -> None:
    written = scalar(text)
    assert not any(c in written for c in LINE_BREAKS)
    assert all(" " <= c <= "~" for c in written), "only printable ASCII is written"
    assert yaml.safe_load(f"key: {written}\nother: 1\n") == {"key": text, "other": 1}


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_any_text_in_a_comment_adds_nothing(text: str) -> None:
    lines = [comment(text), *comment_lines(text)]
    assert all(line.lstrip().startswith("#") for line in lines)
    assert not any(c in "".join(lines) for c in LINE_BREAKS)
    document = "config:\n" + "\n".join(["  " + lines[0], *lines[1:]]) + "\n  k: 1\n"
    assert yaml.safe_load(document) == {"config": {"k": 1}}


@pytest.mark.parametrize(("value", "written"), [
    ("A100-80GB", "A100-80GB"), ("/models/Qwen3.5-27B", "/models/Qwen3.5-27B"),
    ("harbor.local:30000", "harbor.local:30000"), ("v0.19.1", "v0.19.1"),
    # words YAML 1.1 reads as bools or nulls, numbers, a trailing ':' (a key) are quoted
    ("yes", '"yes"'), ("off", '"off"'), ("null", '"null"'), ("0.19.1", '"0.19.1"'), ("0o17", '"0o17"'),
    ("1_000", '"1_000"'), ("abc:", '"abc:"'), ("", '""'),
    ("x\ntrustRemoteCode: true", '"x\\x0atrustRemoteCode: true"'), ("a\u2028b", '"a\\u2028b"'),
    # each escape at its range's edges: \xNN to U+00FF, \uNNNN to U+FFFF, \UNNNNNNNN beyond
    ("\xff", '"\\xff"'), ("\u0100", '"\\u0100"'), ("\uffff", '"\\uffff"'), ("\U00010000", '"\\U00010000"'),
    ([0, 1], "[0, 1]"), (8, "8"), (0.9, "0.9"), (True, "true"),
])
def test_plain_where_both_versions_agree_quoted_otherwise(value: object, written: str) -> None:
    assert scalar(value) == written


def test_a_comment_never_breaks_a_flag_at_its_hyphens() -> None:
    """A reader copies `--gpu-memory-utilization` out of a comment: it stays on one line."""
    lines = comment_lines("x" * 80 + " --gpu-memory-utilization 0.9", width=96)
    assert lines == ["    # " + "x" * 80, "    # --gpu-memory-utilization 0.9"]
