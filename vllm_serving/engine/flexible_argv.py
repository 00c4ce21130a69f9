"""What vLLM's `FlexibleArgumentParser.parse_args` does to `vllm serve`'s argv before argparse sees it.

A port of v0.19.1 `vllm/utils/argparse_utils.py`, steered by the release registry's parser facts:
the first `--model M` moved in front as the positional; `_` to `-` in a `--name` up to its first
`.`; `-O3` / `-O 3` to the optimization flag; dotted JSON keys (`--x.a 1 --x.b=2`) merged into one
`--x '{"a": 1, "b": 2}'` appended after every other argument. Each token remembers the extraArgs
items it came from, so what argparse then makes of it can be blamed on an item.
"""

from __future__ import annotations

import re

import msgspec

from vllm_serving.engine.release_records import ParserFacts

_UNDERSCORE_SCOPE = re.compile(r"(?<=--)[^.]*")  # from the first -- to the first .
_MODEL = re.compile(r"^--model(=.+|$)")
_LEVELS = frozenset({"0", "1", "2", "3"})  # `-O <n>` is rewritten only for these


class Token(msgspec.Struct, frozen=True):
    """One argument as argparse will receive it."""

    text: str
    items: tuple[int, ...]
    """The extraArgs items it came from; () for the typed flags rendered before them."""
    merged: bool = False
    """The JSON value built from dotted keys."""


class Rewritten(msgspec.Struct, frozen=True):
    tokens: list[Token]
    dangling: list[Token]
    """Dotted keys at the very end, with no value: vLLM reads args[i + 1] and fails (IndexError)."""


def rewrite(facts: ParserFacts, tokens: list[Token]) -> Rewritten:
    return _merge_dotted(facts, _rename(facts, _move_model(tokens)))


def _move_model(tokens: list[Token]) -> list[Token]:
    """`vllm serve ... --model M ...` becomes `vllm serve M ...` (the first --model only)."""
    at = next((i for i, t in enumerate(tokens) if _MODEL.match(t.text)), None)
    if at is None:
        return tokens
    if tokens[at].text != "--model":
        return [Token(tokens[at].text.removeprefix("--model="), ()), *tokens[:at], *tokens[at + 1:]]
    if at + 1 < len(tokens):
        return [tokens[at + 1], *tokens[:at], *tokens[at + 2:]]
    return tokens


def _rename(facts: ParserFacts, tokens: list[Token]) -> list[Token]:
    """Underscores to dashes in option names, `--help=TOPIC`, and the -O shorthand."""
    shorthand = facts.optimization_shorthand
    dotted_shorthand = shorthand is not None and not shorthand.startswith("--")
    out: list[Token] = []
    for i, tok in enumerate(tokens):
        text = tok.text
        if text.startswith("--help="):
            out.append(Token("--help", tok.items))
        elif text.startswith("--") and facts.underscore_to_dash:
            key, sep, value = text.partition("=")
            key = _UNDERSCORE_SCOPE.sub(lambda m: m.group(0).replace("_", "-"), key, count=1)
            out.append(Token(key + sep + value, tok.items))
        elif shorthand and text.startswith("-O") and text != "-O" and not (dotted_shorthand and text[2] == "."):
            level = text[3:] if text[2] == "=" else text[2:]
            if dotted_shorthand:  # older releases: -O3 -> -O.level=3, a dotted key of --compilation-config
                out.append(Token(shorthand + level, tok.items))
            else:
                out += [Token(shorthand, tok.items), Token(level, tok.items)]
        elif shorthand and text == "-O" and i + 1 < len(tokens) and tokens[i + 1].text in _LEVELS:
            out.append(Token(shorthand.removesuffix("="), tok.items))
        else:
            out.append(tok)
    return out


def _merge_dotted(facts: ParserFacts, tokens: list[Token]) -> Rewritten:
    if not facts.dotted_json_keys:
        return Rewritten(tokens, [])
    skip: set[int] = set()
    dangling: list[Token] = []
    merged: dict[str, tuple[int, ...]] = {}
    for i, tok in enumerate(tokens):
        if i in skip or not tok.text.startswith("-") or "." not in tok.text:
            continue
        key, sep, _ = tok.text.partition("=")
        if sep and "." not in key:
            continue  # the dot was in the value
        skip.add(i)
        if not sep:
            if i + 1 == len(tokens):
                dangling.append(Token(key, tok.items))
                continue
            skip.add(i + 1)  # whatever follows is the value, even a flag
        suffix = facts.list_append_suffix
        if suffix and key.endswith(suffix):
            key = key[: -len(suffix)]
        name = key.split(".", 1)[0]
        merged[name] = merged.get(name, ()) + tok.items
    kept = [t for i, t in enumerate(tokens) if i not in skip]
    for name, items in merged.items():
        kept += [Token(name, items), Token("{}", items, merged=True)]
    return Rewritten(kept, dangling)
