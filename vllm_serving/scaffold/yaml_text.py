"""The one emitter of the YAML `init` writes: every scalar and every comment goes through here.

Text reaches the stack file from outside this program - a config.json's model_type, a file or
folder name, a command-line argument - and the file is read back by two parsers: PyYAML (YAML
1.1, the offline tools) and the Pulumi CLI's Go yaml.v3 (YAML 1.2). They disagree on what ends a
line (1.1 also breaks at NEL, U+2028 and U+2029) and on what a plain word means (`yes`, `on`,
`0o17`, `1_000`). So nothing is left to either:
- a scalar is written plain only when it is a plain word both read as the same string (a letter,
  digit, `/` or `_` first, then letters, digits and `._/+@-`, and no word either resolves to
  something else); anything else is double-quoted, with `"` and `\\` escaped and every character
  outside printable ASCII written as `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN` (escapes both versions read);
- a comment holds printable ASCII only, the rest escaped the same way, so no line break of
  either version ends it early and nothing after it becomes a key.
"""

from __future__ import annotations

import math
import re
import textwrap

WIDTH = 100
"""Comments wrap here."""
# A plain word both versions read as a string: a letter or '/' first (no number, no indicator),
# never ending in ':' (a key), and not one of the words 1.1 reads as a bool or a null.
_PLAIN = re.compile(r"[A-Za-z/][A-Za-z0-9._/+@:-]*(?<!:)")
_WORDS = frozenset({"y", "n", "yes", "no", "true", "false", "on", "off", "null"})


def _escaped(char: str, quoted: bool) -> str:
    if quoted and char in '"\\':
        return "\\" + char
    if " " <= char <= "~":
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def ascii_text(text: str, quoted: bool = False) -> str:
    """`text` with every character outside printable ASCII as a YAML escape (`\\x0a`, `\\u2028`);
    `quoted`: also `"` and `\\`, for the inside of a double-quoted scalar."""
    return "".join(_escaped(c, quoted) for c in text)


def scalar(value: object) -> str:
    """One YAML scalar (or a flow list of them) that both parsers read back as `value`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(scalar(item) for item in value) + "]"
    if not isinstance(value, str):
        raise TypeError(f"no YAML scalar for {value!r}")
    if _PLAIN.fullmatch(value) and value.lower() not in _WORDS:
        return value
    return f'"{ascii_text(value, quoted=True)}"'


def comment_lines(text: str, indent: str = "    ", width: int = WIDTH) -> list[str]:
    """`text` as comment lines at `indent`, wrapped at `width`, inert (see the module docstring)."""
    prefix = f"{indent}# "
    return textwrap.wrap(ascii_text(text), width=width, initial_indent=prefix, subsequent_indent=prefix,
                         break_on_hyphens=False) or [prefix.rstrip()]


def comment(text: str, indent: str = "") -> str:
    """One comment line, not wrapped (a header line), inert."""
    return f"{indent}# {ascii_text(text)}"
