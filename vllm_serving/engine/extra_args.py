"""`engine.extraArgs` read as `vllm serve` reads its argv, with the image release's flag table.

vLLM's own rewrite first (`flexible_argv`), then a port of CPython 3.12's argparse over the
result (`_parse_optional`, `_get_option_tuples`, `consume_optional`): an exact option string,
`--flag=value`, `-qfp8`, a unique prefix (vLLM keeps allow_abbrev; several prefixes are an
error), values taken by nargs. The items are read after the typed flags (`before`), as the
container's argv has them, so a stray word after `--served-model-name` is read as a name.

A `Problem` names the item's index. No problem carries an item's value or a word of an item that
is not a flag: any of them may be a secret.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from typing import Literal

import msgspec

from vllm_serving.engine.flags import MODELLED_FLAGS
from vllm_serving.engine.flexible_argv import Token, rewrite
from vllm_serving.engine.release_records import ServeFlag
from vllm_serving.engine.release_registry import VllmRelease

SECRET_FLAGS: Mapping[str, str] = {"--api-key": "apiKey", "--hf-token": "hfToken"}
"""vLLM flags whose value is a credential -> the secret config key that carries it instead."""

ProblemKind = Literal["secret", "typed-key", "forbidden", "value", "ambiguous", "unknown", "not-a-flag"]
# one problem per item: the first kind in this order wins
_PRIORITY: tuple[ProblemKind, ...] = ("secret", "typed-key", "forbidden", "value", "ambiguous", "unknown",
                                      "not-a-flag")
_HELP = "prints vLLM's help and exits, so the server never starts"
_CONFIG = ("makes vLLM read more flags from a YAML file inside the container, which no check here sees: "
           "they could override a typed key or carry a secret")
_NO_VALUE = "takes no value, but the item gives one: vLLM exits ('ignored explicit argument')"
_NEEDS_VALUE = "needs a value and none follows: vLLM exits ('expected one argument')"

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")  # argparse's _negative_number_matcher
_MAX_CANDIDATES = 6
# Fuzzy suggestions cost milliseconds each against ~400 flags: a hostile list of unknown flags
# gets them for its first few, and a name longer than any flag gets none.
MAX_SUGGESTIONS = 16
MAX_SUGGESTED_LENGTH = 64

Reading = list[tuple[str | None, str | None]]
"""argparse's reading of one option-like argument: (option string, or None if unknown; explicit value)."""


class Problem(msgspec.Struct, frozen=True):
    """Why vLLM would not take item `index` as written, or why this project must not pass it."""

    kind: ProblemKind
    index: int
    flag: str
    """The flag vLLM reads (its long name), or the item's option text up to `=` when it names none."""
    detail: str
    """The config key to set instead, the reason, or a suggestion."""


def secret_key_in(item: str) -> str | None:
    """The secret config key an extraArgs item would pass in any vLLM release, or None.

    Independent of the release on purpose (settings are validated before the image tag is
    known): any non-empty prefix of a secret flag (argparse takes a unique prefix and refuses an
    ambiguous one, so no prefix means anything else), any case, `_` for `-`, `=value`, `.sub.key`,
    or the name with its value glued on; every word of an item that holds spaces.
    """
    for word in item.split():
        head = word.split("=", 1)[0].split(".", 1)[0].replace("_", "-").casefold()
        if len(head) < 3 or not head.startswith("--"):
            continue
        for flag, key in SECRET_FLAGS.items():
            if flag.startswith(head) or head.startswith(flag):
                return key
    return None


class _Table(msgspec.Struct, frozen=True):
    release: VllmRelease
    options: Mapping[str, ServeFlag]  # argparse's _option_string_actions
    negative_number_options: bool

    def optional(self, text: str) -> Reading | None:
        """argparse's `_parse_optional`: None for a positional, else one reading per match."""
        if not text or text[0] != "-":
            return None
        if text in self.options:
            return [(text, None)]
        if len(text) == 1:
            return None
        head, sep, explicit = text.partition("=")
        if sep and head in self.options:
            return [(head, explicit)]
        found = self._prefixes(text)
        if found:
            return found
        if _NEGATIVE_NUMBER.match(text) and not self.negative_number_options:
            return None
        if " " in text:
            return None
        return [(None, None)]

    def _prefixes(self, text: str) -> Reading:
        """argparse's `_get_option_tuples` (CPython 3.12.10 and later)."""
        abbrev = self.release.parser.allow_abbrev
        prefix, sep, explicit = text.partition("=")
        value = explicit if sep else None
        if text[1] == "-":
            return [(o, value) for o in self.options if abbrev and o.startswith(prefix)]
        found: Reading = []
        for option in self.options:
            if option == text[:2]:
                found.append((option, text[2:]))  # -qfp8: the rest is the value
            elif abbrev and option.startswith(prefix):
                found.append((option, value))
        return found


class _Suggestions:
    """The closest long flag to an unknown one, for at most MAX_SUGGESTIONS names per reading."""

    def __init__(self, table: _Table) -> None:
        self.longs = [o for o in table.options if o.startswith("--")]
        self.left = MAX_SUGGESTIONS

    def closest(self, head: str) -> str | None:
        if self.left <= 0 or len(head) > MAX_SUGGESTED_LENGTH:
            return None
        self.left -= 1
        close = difflib.get_close_matches(head.replace("_", "-").casefold(), self.longs, n=1)
        return close[0] if close else None


@cache
def _table(release: VllmRelease) -> _Table:
    options = {o: f for f in release.flags.values() for o in f.option_strings}
    shorthand = release.flags.get(release.parser.optimization_shorthand or "")
    if shorthand is not None and options.get("-O") is shorthand:
        # the registry lists -O for what FlexibleArgumentParser rewrites it to; argparse has no -O
        del options["-O"]
    return _Table(release, options, any(_NEGATIVE_NUMBER.match(o) for o in options))


def extra_args_problems(release: VllmRelease, extra_args: Sequence[str],
                        before: Sequence[str] = ()) -> tuple[Problem, ...]:
    """What is wrong with each item of `extra_args` when vLLM `release` reads them after `before`
    (the typed flags): at most one problem per item, in item order."""
    return _problems(release, tuple(before), tuple(extra_args))


@lru_cache(maxsize=512)
def _problems(release: VllmRelease, before: tuple[str, ...], extra: tuple[str, ...]) -> tuple[Problem, ...]:
    if not extra:
        return ()
    table = _table(release)
    tokens = [Token(t, ()) for t in before] + [Token(t, (i,)) for i, t in enumerate(extra)]
    rewritten = rewrite(release.parser, tokens)
    problems: list[Problem] = []
    for tok in rewritten.dangling:
        secret = secret_key_in(tok.text)
        problems += [Problem("secret", n, _flag_of(secret), secret) if secret else
                     Problem("value", n, tok.text.split(".", 1)[0], "needs a value and none follows: vLLM "
                             "stops with an IndexError") for n in tok.items]
    _read(table, rewritten.tokens, problems, _Suggestions(table))
    first: dict[int, Problem] = {}
    for problem in sorted(problems, key=lambda p: (p.index, _PRIORITY.index(p.kind))):
        first.setdefault(problem.index, problem)
    return tuple(first.values())


def _read(table: _Table, tokens: list[Token], problems: list[Problem], suggestions: _Suggestions) -> None:
    """argparse's pass over the (rewritten) argv of the `serve` subcommand."""
    kinds = [table.optional(t.text) for t in tokens]
    end = next((i for i, t in enumerate(tokens) if t.text == "--"), len(tokens))
    kinds[end:] = [None] * (len(tokens) - end)  # after '--' everything is positional
    previous: ServeFlag | None = None
    after_secret = False  # what follows a secret flag may be its value: never describe it
    i = 0
    while i < len(tokens):
        tok, kind = tokens[i], kinds[i]
        run = next((n for n, k in enumerate(kinds[i + 1:]) if k is not None), len(kinds) - i - 1)
        if kind is None:
            if i > 0 and tok.items and not after_secret:  # token 0 is the model, moved in front
                problems += _stray(tok, previous)
            i += 1
            continue
        option, explicit = kind[0]
        if len(kind) > 1 or option is None:
            if tok.items and not after_secret:
                problems += _unresolved(table, tok, kind, suggestions)
            after_secret = after_secret or secret_key_in(tok.text) is not None
            for value in tokens[i + 1: i + 1 + run]:  # its values, if any, go with it
                problems += _secret(value)
            i += 1 + run
            continue
        flag = table.options[option]
        taken, trouble = _arity(flag, explicit, run)
        problems += [p for p in (_judge(table, flag, n, trouble) for n in tok.items) if p is not None]
        for value in tokens[i + 1: i + 1 + taken]:
            if value.items and not tok.items:
                owner = MODELLED_FLAGS.get(flag.name, "a typed key")
                problems += [Problem("not-a-flag", n, flag.name, f"vLLM reads it as one more value of "
                                     f"{flag.name}, which {owner} sets") for n in value.items]
        after_secret = flag.name in SECRET_FLAGS and taken == 0  # its value may be the next item
        previous = flag
        i += 1 + taken


def _arity(flag: ServeFlag, explicit: str | None, run: int) -> tuple[int, str | None]:
    """How many of the `run` positionals after `flag` argparse gives it, and its complaint if any."""
    nargs = flag.nargs if flag.takes_value else 0
    if explicit is not None:  # --flag=value: exactly that one value
        return 0, _NO_VALUE if isinstance(nargs, int) and nargs != 1 else None
    if isinstance(nargs, int):
        need, take = nargs, nargs
    elif nargs in ("?", "*"):
        need, take = 0, (min(run, 1) if nargs == "?" else run)
    else:  # None: one value; "+": one or more
        need, take = 1, (run if nargs == "+" else 1)
    return (0, _NEEDS_VALUE) if run < need else (take, None)


def _judge(table: _Table, flag: ServeFlag, index: int, trouble: str | None) -> Problem | None:
    if flag.name in SECRET_FLAGS:
        return Problem("secret", index, flag.name, SECRET_FLAGS[flag.name])
    if flag.name in MODELLED_FLAGS:
        return Problem("typed-key", index, flag.name, MODELLED_FLAGS[flag.name])
    if flag.action == "help":
        return Problem("forbidden", index, flag.name, _HELP)
    if flag.name == table.release.parser.config_file_flag:
        return Problem("forbidden", index, flag.name, _CONFIG)
    return None if trouble is None else Problem("value", index, flag.name, trouble)


def _unresolved(table: _Table, tok: Token, kind: Reading, suggestions: _Suggestions) -> list[Problem]:
    head = tok.text.split("=", 1)[0]
    secret = _secret(tok)
    if secret:
        return secret
    if len(kind) > 1:
        names = sorted(str(o) for o, _ in kind)
        shown = ", ".join(names[:_MAX_CANDIDATES]) + (", ..." if len(names) > _MAX_CANDIDATES else "")
        return [Problem("ambiguous", n, head, shown) for n in tok.items]
    close = suggestions.closest(head)
    hint = (f"did you mean {close}? (flags are case-sensitive)" if close
            else f"remove it: vLLM {table.release.tag} has no such flag")
    return [Problem("unknown", n, head, hint) for n in tok.items]


def _stray(tok: Token, previous: ServeFlag | None) -> list[Problem]:
    """A positional where vLLM takes none (the model is its only one)."""
    secret = _secret(tok)
    if secret:
        return secret
    if tok.merged:
        detail = "takes no dotted sub-keys: vLLM merges them into one JSON argument it then cannot place"
    elif tok.text == "--":
        detail = "'--' makes vLLM read every item after it as a positional argument, and it takes none"
    elif not tok.text.strip():
        detail = "is empty: vLLM reads it as a positional argument, and takes none"
    elif any(c.isspace() for c in tok.text):
        detail = ("holds a space: vLLM receives it whole, as one positional argument (no shell splits "
                  "the argv), and exits ('unrecognized arguments')")
    elif previous is not None:
        detail = (f"is not a flag, and {previous.name} before it takes no further value: vLLM exits "
                  "('unrecognized arguments')")
    else:
        detail = "is not a flag: vLLM exits ('unrecognized arguments')"
    return [Problem("not-a-flag", n, "", detail) for n in tok.items]


def _secret(tok: Token) -> list[Problem]:
    """The item refused as a secret when a word of it spells a secret flag, as `secret_key_in` reads it.

    No release-specific reading is needed: in every release's flag table, the option strings
    `secret_key_in` takes for a secret are exactly those of the secret flags (tests/engine pins it),
    so argparse's reading of a word could only agree with it."""
    secret = secret_key_in(tok.text)
    return [] if secret is None else [Problem("secret", n, _flag_of(secret), secret) for n in tok.items]


def _flag_of(secret_key: str) -> str:
    return next(flag for flag, key in SECRET_FLAGS.items() if key == secret_key)
