"""What reaches a terminal is inert: control, format and separator characters escaped - in
findings, and in everything a CLI verb prints, whatever file, name or argument it came from."""

from __future__ import annotations

import io
import json
import shutil
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.cli import main
from vllm_serving.findings import Finding, Severity
from vllm_serving.terminal_text import EscapingStream, printable

INERT = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def raw_controls(text: str, keep: str = "") -> list[str]:
    return [c for c in text if unicodedata.category(c) in INERT and c not in keep]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_printable_leaves_no_control_and_changes_nothing_else(text: str) -> None:
    shown = printable(text)
    assert raw_controls(shown) == []
    if not raw_controls(text):
        assert shown == text
    assert raw_controls(printable(text, keep=frozenset("\n"))) == [c for c in raw_controls(text) if c == "\n"]


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=30), st.text(max_size=30))
def test_a_finding_is_one_inert_line_in_text_and_json(key: str, message: str) -> None:
    finding = Finding("stack-file", Severity.ERROR, key, message, "fix")
    assert raw_controls(finding.line()) == []
    assert all(raw_controls(value) == [] for value in finding.as_dict().values())


def test_a_stream_keeps_its_line_breaks_and_tabs_and_escapes_the_rest() -> None:
    # a whole stream is many lines: newlines and tabs (plan's columns) are its own layout, a
    # carriage return or an escape sequence in a value is not
    sink = io.StringIO()
    EscapingStream(sink).write("a\tb\nc\rd\x1b[2J")
    assert sink.getvalue() == "a\tb\nc\\rd\\x1b[2J"


HOSTILE = "x\x1b[2J\x1b]8;;evil\x07\rOK\u202e\n== y =="


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    text = (stack_file("v100")).read_text(encoding="utf-8")
    (tmp_path / "Pulumi.v100.yaml").write_text(text.replace("  vllm-serving:engine:\n", "  vllm-serving:engine:\n"
                                                            f"    {json.dumps(HOSTILE)}: 1\n", 1))
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["check"], ["check", "v100"], ["plan", "v100"], ["check", HOSTILE], ["plan", HOSTILE], ["diff", "v100", HOSTILE],
    ["render", HOSTILE], ["init", HOSTILE, "--gpu", "A100-80GB", "--count", "1", "--model", "Qwen3.5-27B"],
    ["init", "n", "--gpu", HOSTILE, "--count", "1", "--model", "Qwen3.5-27B"], ["check", "--config-file", HOSTILE],
    ["capacity", "--gpu", HOSTILE, "--tp", "1", "--model", "Qwen3.5-27B"], ["plan", "v100", "--format", HOSTILE],
])
def test_no_verb_prints_a_control_character(project: Path, argv: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown key holding escapes, a STACK argument, a GPU name: each comes back escaped."""
    try:
        main(["--project-dir", str(project), *argv])
    except SystemExit:
        pass  # argparse refusing an argument prints its message first
    out = capsys.readouterr()
    assert raw_controls(out.out, keep="\n") == [] and raw_controls(out.err, keep="\n") == []
    assert "== y ==" not in out.out.splitlines() and "\\x1b" in out.out + out.err


# One character of each category that is not text (Unicode's General_Category values, as
# unicodedata gives them), with the escape Python itself writes for it (`repr`/`ascii` spell a
# character below U+0100 as \xNN - \t, \n and \r by name -, below U+10000 as \uNNNN, above as
# \UNNNNNNNN).
@pytest.mark.parametrize(("char", "escaped"), [
    ("\x1b", "\\x1b"),  # Cc: ESC, the start of every terminal escape sequence
    ("\r", "\\r"),  # Cc: carriage return, overprints the line before it
    ("\n", "\\n"),  # Cc: a line break that would forge a line of its own
    ("\x7f", "\\x7f"),  # Cc: DEL
    ("\x85", "\\x85"),  # Cc: NEL, a C1 line break
    ("\xad", "\\xad"),  # Cf: soft hyphen, invisible
    ("\u202e", "\\u202e"),  # Cf: right-to-left override
    ("\u2028", "\\u2028"),  # Zl: line separator
    ("\u2029", "\\u2029"),  # Zp: paragraph separator
    ("\ud800", "\\ud800"),  # Cs: a lone surrogate (an undecodable file name byte)
    ("\U000e0001", "\\U000e0001"),  # Cf past the Basic Multilingual Plane: LANGUAGE TAG
    ("\U0001d173", "\\U0001d173"),  # Cf: MUSICAL SYMBOL BEGIN BEAM, invisible
])
def test_each_kind_of_non_text_is_written_as_python_escapes_it(char: str, escaped: str) -> None:
    assert escaped == ascii(char)[1:-1]  # the oracle: Python's own spelling of the character
    assert printable(f"a{char}b") == f"a{escaped}b"


@pytest.mark.parametrize("text", ["\U00010000", "\u0100", "\xe9t\xe9", "\u4e2d\u6587", "\U0001f600", "\ufb01"])
def test_letters_and_symbols_outside_ascii_are_shown_as_they_are(text: str) -> None:
    # U+10000 and U+0100 sit right at the escapes' width boundaries; they are letters
    assert printable(text) == text


def test_printable_keeps_only_the_characters_it_is_told_to() -> None:
    assert printable("a\nb\tc") == "a\\nb\\tc"  # a single line (a finding) keeps nothing
    assert printable("a\nb\tc", keep=frozenset("\t")) == "a\\nb\tc"


def test_a_stream_writes_what_it_is_given_and_reports_its_length() -> None:
    sink = io.StringIO()
    stream = EscapingStream(sink)
    # print() and logging rely on write() returning the characters taken, as TextIOBase does
    assert stream.write("\x1b[2J") == 4
    assert sink.getvalue() == "\\x1b[2J"


def test_a_stream_answers_for_the_stream_it_wraps() -> None:
    """argparse, colour decisions and print() ask the wrapped stream for its encoding, whether it is
    a terminal, its errors handler: the wrapper passes those through."""
    raw = io.BytesIO()
    stream = EscapingStream(io.TextIOWrapper(raw, encoding="latin-1", errors="strict"))
    assert stream.encoding == "latin-1" and stream.errors == "strict"
    isatty = stream.isatty
    assert callable(isatty) and isatty() is False
    stream.write("caf\xe9\n")
    stream.flush()  # flush reaches the wrapped stream: the bytes are there
    assert raw.getvalue() == b"caf\xe9\n"
    with pytest.raises(AttributeError):
        stream.no_such_attribute  # noqa: B018 - an unknown name is still an AttributeError
