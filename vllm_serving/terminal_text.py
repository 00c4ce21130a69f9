"""Text bound for a terminal or a log, with every control character written out as an escape.

A value from a stack file, a config.json, a file name or an argument can hold an escape sequence
(`\\x1b[2J` clears the screen, `\\x1b]8;;` forges a link), a carriage return that overprints the
line before it, a line break that forges a line of its own (`ERROR ...` / `ok: no findings`), or a
Unicode format character that reorders what the reader sees (U+202E, right-to-left override).
This is the one function that makes such text inert; it is applied where text leaves the program:
each finding's line and JSON (`findings.py`), and everything the CLI writes to stdout and stderr
(`cli/__init__.py` wraps both streams). Escapes read as Python writes them (`ascii`): `\\x1b`,
`\\n`, `\\u202e`.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TextIO

# Categories that are not text: controls (C0, DEL, C1 - NEL and CSI among them), format characters
# (bidi overrides, zero-width characters), the Unicode line and paragraph separators, and lone
# surrogates (a file name that is not UTF-8, as Python decodes it; the stream could not encode it).
_INERT_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# Everything outside printable ASCII is looked at; only the categories above are escaped.
_CANDIDATES = re.compile(r"[^\x20-\x7e]")
STREAM_KEEPS = frozenset("\n\t")
"""What a multi-line sink (a whole stream) keeps as it is: the line break it writes between lines
and the tab that aligns a table's columns."""


def _escape(char: str) -> str:
    """Python's own spelling of the character (`ascii`): `\\x1b`, `\\n`, `\\u202e`, `\\U000e0001`."""
    return ascii(char)[1:-1]


def printable(text: str, keep: frozenset[str] = frozenset()) -> str:
    """`text` with each control, format and separator character (except those in `keep`) escaped."""
    def replace(match: re.Match[str]) -> str:
        char = match.group(0)
        if char in keep or unicodedata.category(char) not in _INERT_CATEGORIES:
            return char
        return _escape(char)

    return _CANDIDATES.sub(replace, text)


class EscapingStream:
    """A text stream that writes `printable(text, keep=STREAM_KEEPS)` to the stream it wraps."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(printable(text, keep=STREAM_KEEPS))
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name: str) -> object:  # encoding, isatty, fileno... of the wrapped stream
        return getattr(self.inner, name)
