"""A catalog name from what a person types: one answer, said back, or the candidates.

The flags (`init --gpu/--model`, `capacity --gpu/--model`) take a name as people have it at hand:
the catalog's own (`RTX-4090`), another known spelling (nvidia-smi's `NVIDIA GeForce RTX 4090`,
the node label, a Hugging Face id `Qwen/Qwen3-8B`, `rtx4090` without separators), or a unique part
of one (`4090`). Anything but the catalog's own spelling is said back ("taken as RTX-4090"); a
part that several entries share (`a100`) is refused with them as candidates, as is a name close
to none. A stack file keeps the catalog's one spelling (find_gpu/find_model): what a reviewer reads.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

import msgspec

# Separators people use between the parts of a name: `RTX 4090`, `rtx_4090`, `Qwen/Qwen3-8B`.
_SEPARATORS = re.compile(r"[\s_/-]+")
MAX_CANDIDATES = 4


class Lookup(msgspec.Struct, frozen=True):
    """The answer to a typed name."""

    typed: str
    name: str | None
    """The catalog name, when the typed one picks exactly one entry."""
    how: str | None = None
    """Why a name that is not the catalog's own spelling was taken (`nvidia-smi's name`); None for
    the catalog's own spelling (case aside) and for a refusal."""
    candidates: tuple[str, ...] = ()
    """The entries a refused name could mean (several share it, or the closest spellings)."""

    @property
    def note(self) -> str | None:
        """`'4090' taken as RTX-4090 (a unique part of its name)`, for a name that needed one."""
        if self.name is None or self.how is None:
            return None
        return f"{self.typed!r} taken as {self.name} ({self.how})"

    def refusal(self, catalog: str) -> str:
        """Why the name was refused, with the candidates: `'a100' could be any of A100-40GB, ...`."""
        if self.how == "ambiguous":
            return f"{self.typed!r} could be any of {', '.join(self.candidates)} in the {catalog}: give one"
        hint = f"; did you mean {', '.join(self.candidates)}?" if self.candidates else ""
        return f"{self.typed!r} is not in the {catalog}{hint}"


def tokens(name: str) -> tuple[str, ...]:
    """`NVIDIA GeForce RTX 4090` -> ('nvidia', 'geforce', 'rtx', '4090')."""
    return tuple(t for t in _SEPARATORS.split(name.strip().lower()) if t)


def compact(name: str) -> str:
    """A name without case or separators: `RTX 4090`, `rtx-4090` and `rtx4090` are one spelling."""
    return "".join(tokens(name))


def lookup(typed: str, names: Sequence[str], spellings: Mapping[str, tuple[str, str]],
           words: Mapping[str, frozenset[str]], ignored_words: frozenset[str] = frozenset()) -> Lookup:
    """The entry of `names` that `typed` means.

    In order: a catalog name (any case); a known spelling (`spellings`: compact spelling ->
    (catalog name, what that spelling is)); a catalog name without separators; every typed word
    (less `ignored_words` such as vendor names) a whole word of exactly one entry (`words`: the
    words of its name and other spellings). Several such entries: ambiguous, they are the
    candidates; none: the closest spellings are, and nothing is taken.
    """
    by_lower = {n.lower(): n for n in names}
    if typed.strip().lower() in by_lower:
        return Lookup(typed, by_lower[typed.strip().lower()])
    key = compact(typed)
    by_compact = {compact(n): n for n in names}
    if key in by_compact:
        return Lookup(typed, by_compact[key], "the catalog's name, spelt another way")
    if key in spellings:
        name, how = spellings[key]
        return Lookup(typed, name, how)
    typed_words = [w for w in tokens(typed) if w not in ignored_words]
    holders = [n for n in names if typed_words and set(typed_words) <= words.get(n, frozenset(tokens(n)))]
    if len(holders) == 1:
        return Lookup(typed, holders[0], f"the only entry whose names include {' '.join(typed_words)}")
    if holders:
        return Lookup(typed, None, "ambiguous", tuple(holders[:MAX_CANDIDATES]))
    close = difflib.get_close_matches(key, list(by_compact) + list(spellings), n=6, cutoff=0.6)
    found = [by_compact.get(c) or spellings[c][0] for c in close] or _near_number(key, names, words)
    return Lookup(typed, None, None, tuple(dict.fromkeys(found))[:3])


def _near_number(key: str, names: Sequence[str], words: Mapping[str, frozenset[str]]) -> list[str]:
    """The entries holding a number close to an all-digit name (`4091`: RTX-4090's 4090): against
    a whole name (`rtx4090`) four digits are too short to count as close."""
    if not key.isdigit():
        return []
    holding: dict[str, list[str]] = {}
    for name in names:
        for word in words.get(name, frozenset(tokens(name))):
            if word.isdigit():
                holding.setdefault(word, []).append(name)
    # difflib's defaults: the 3 closest numbers within a 0.6 ratio (lookup keeps 3 names of them)
    return [name for word in difflib.get_close_matches(key, list(holding)) for name in holding[word]]
