"""How much of a value a finding quotes: a value in a stack file may be huge (pasted by mistake),
hostile (a terminal escape is escaped elsewhere, but its length is bounded here), or a secret typed
into the wrong key. The prefix is enough to find the line."""

from __future__ import annotations

SHOWN = 60
"""Characters of a user's key or value a finding shows."""


def shown(text: str) -> str:
    """The first SHOWN characters of `text`."""
    return text[:SHOWN]
