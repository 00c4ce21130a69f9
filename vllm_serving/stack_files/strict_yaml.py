"""Strict, bounded YAML for stack files: what `yaml.safe_load` gives, or a refusal saying where.

A stack file is a small mapping of settings; anything else is a mistake or an attack, refused
before it can cost memory or time:
- size: at most `MAX_FILE_BYTES`, and never more than that plus one byte is read;
- nesting: at most `MAX_DEPTH` collections deep, counted on PyYAML's event stream (its own
  composer recurses, so 100k nested brackets would end in RecursionError);
- anchors and aliases: refused at the first one, before anything expands (an alias bomb is a few
  hundred bytes that expand to gigabytes, e.g. in the repr of an error message);
- duplicate keys: refused with both line numbers (YAML silently keeps the last one);
- one document, plain scalar keys, no merge keys (`<<`), no value over `MAX_SCALAR_CHARS`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from vllm_serving.bounded_read import FileRefused, read_regular_file, size_text

MAX_FILE_BYTES = 256 * 1024
MAX_DEPTH = 32
MAX_SCALAR_CHARS = 4096
EXCERPT_CHARS = 40
_FLATTEN = "flatten the value: stack settings are a few levels deep"
MERGE_TAG = "tag:yaml.org,2002:merge"
COLLECTION_TAGS = (None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
# libyaml's parser when PyYAML was built with it (several times faster); the same events either way
_PARSER: Any = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader

Where = tuple[Any, ...]
"""Keys (str, or whatever a YAML key resolves to) and list indices (int) from the root to a node."""


class YamlRefused(Exception):
    """The file breaks one of the limits above; `where` is the path to the offending node."""

    def __init__(self, code: str, where: Where, message: str, fix: str) -> None:
        self.code, self.where, self.message, self.fix = code, where, message, fix
        super().__init__(message)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` quoted for a message, cut to `limit` characters: never a whole hostile value."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The file's bytes (`bounded_read`: a regular file, never a blocking open); a file over
    `limit` is refused after reading `limit + 1` bytes of it."""
    try:
        return read_regular_file(path, limit)
    except FileRefused as exc:
        if exc.too_large:
            raise YamlRefused("stack-file-too-large", (), exc.reason,
                              f"a stack file holds settings only; keep it under {size_text(limit)}") from None
        raise YamlRefused("stack-file", (), exc.reason, "name a stack YAML file") from None


class _Collection(msgspec.Struct):
    """A mapping or sequence being built; for a mapping, the key waiting for its value."""

    where: Where
    items: dict[Any, Any] | list[Any]
    key: Any = None
    has_key: bool = False
    key_lines: dict[Any, int] = msgspec.field(default_factory=dict)

    def child(self) -> Where:
        """Where the next node sits: the mapping itself while a key is read."""
        if isinstance(self.items, list):
            return (*self.where, len(self.items))
        return (*self.where, self.key) if self.has_key else self.where

    def expects_key(self) -> bool:
        return isinstance(self.items, dict) and not self.has_key


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1 if event.start_mark is not None else 0


def _scalar(event: Any, resolver: Resolver, constructor: SafeConstructor) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        # PyYAML's stubs leave Resolver.resolve untyped; it returns the tag as a str
        tag = resolver.resolve(ScalarNode, event.value, event.implicit)  # type: ignore[no-untyped-call]
    node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
    if tag == MERGE_TAG:
        return node  # the caller refuses it with a message of its own
    try:
        return constructor.construct_object(node)
    except ValueError:
        # PyYAML's constructors let a bare ValueError out for `!!int x`: a YAML error at the value
        raise ConstructorError(None, None, f"the value cannot be read as {tag}", node.start_mark) from None


def _refuse_anchor(event: Any, where: Where) -> None:
    if isinstance(event, yaml.AliasEvent):
        raise YamlRefused("stack-file-alias", where,
                          f"uses the YAML alias *{str(event.anchor)[:EXCERPT_CHARS]} (line {_line(event)})",
                          "write the value out in full: stack files take no anchors (&) or aliases (*)")
    if getattr(event, "anchor", None) is not None:
        raise YamlRefused("stack-file-alias", where,
                          f"defines the YAML anchor &{str(event.anchor)[:EXCERPT_CHARS]} (line {_line(event)})",
                          "write each value out in full: stack files take no anchors (&) or aliases (*)")


def load(text: str) -> Any:
    """The document in `text` as `yaml.safe_load` would return it, or YamlRefused / yaml.YAMLError."""
    stack: list[_Collection] = []
    try:
        return _compose(yaml.parse(text, Loader=_PARSER), stack)
    except yaml.YAMLError as exc:
        # libyaml stops at its own nesting limit while scanning ahead, before the event that
        # would reach MAX_DEPTH arrives: the same refusal, at the innermost collection read so far
        if "maximum nesting depth" not in str(exc):
            raise
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        raise YamlRefused("stack-file-too-deep", stack[-1].child() if stack else (),
                          f"nests deeper than {MAX_DEPTH} levels{line}", _FLATTEN) from None


def _compose(events: Iterator[Any], stack: list[_Collection]) -> Any:
    """The root value from the event stream; `stack` holds the collections still open."""
    resolver, constructor = Resolver(), SafeConstructor()
    root: Any = None
    documents = 0
    for event in events:
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise YamlRefused("stack-file", (), f"holds a second YAML document (line {_line(event)})",
                                  "keep one document: remove the `---` line and what follows it")
            continue
        if isinstance(event, (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent)):
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            value: Any = stack.pop().items
        else:
            where = stack[-1].child() if stack else ()
            _refuse_anchor(event, where)
            if stack and stack[-1].expects_key() and not isinstance(event, yaml.ScalarEvent):
                raise YamlRefused("stack-file", where, f"has a key that is not a plain word (line {_line(event)})",
                                  "write each key as a plain name")
            if isinstance(event, yaml.ScalarEvent):
                if len(event.value) > MAX_SCALAR_CHARS:
                    raise YamlRefused("stack-file", where,
                                      f"holds a value of {len(event.value)} characters (line {_line(event)}): "
                                      f"{excerpt(event.value)}", f"keep each value under {MAX_SCALAR_CHARS} characters")
                value = _scalar(event, resolver, constructor)
            else:
                if event.tag not in COLLECTION_TAGS:
                    raise YamlRefused("stack-file", where,
                                      f"uses the YAML tag {excerpt(str(event.tag))} (line {_line(event)})",
                                      "remove the tag: stack files hold plain mappings, lists and values")
                if len(stack) >= MAX_DEPTH:
                    raise YamlRefused("stack-file-too-deep", where,
                                      f"nests deeper than {MAX_DEPTH} levels (line {_line(event)})", _FLATTEN)
                items: dict[Any, Any] | list[Any] = {} if isinstance(event, yaml.MappingStartEvent) else []
                stack.append(_Collection(where, items))
                continue
        if not stack:
            root = value
        else:
            _attach(stack[-1], value, _line(event))
    return root


def _attach(parent: _Collection, value: Any, line: int) -> None:
    if isinstance(value, ScalarNode):  # `<<`: only ever useful with an alias
        raise YamlRefused("stack-file-alias", parent.child(), f"uses a YAML merge key `<<` (line {line})",
                          "write the keys out in full: stack files take no merge keys")
    if isinstance(parent.items, list):
        parent.items.append(value)
    elif parent.has_key:
        parent.items[parent.key] = value
        parent.key, parent.has_key = None, False
    elif value in parent.key_lines:
        name = excerpt(str(value))
        raise YamlRefused("stack-file-duplicate-key", (*parent.where, value),
                          f"{name} is set twice (lines {parent.key_lines[value]} and {line}); "
                          "YAML would keep only the last one",
                          f"keep one {name}: merge the two into one and delete the other")
    else:
        parent.key_lines[value] = line
        parent.key, parent.has_key = value, True


def load_file(path: Path) -> Any:
    """`load` of a file read with `read_bounded`; UnicodeDecodeError for a file that is not UTF-8."""
    return load(read_bounded(path).decode("utf-8"))
