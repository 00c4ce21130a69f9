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
    assert raw_controls(printable(text, keep="\n")) == [c for c in raw_controls(text) if c == "\n"]


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
    assert sink.getvalue() == "a\tb\nc\\x0dd\\x1b[2J"


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
