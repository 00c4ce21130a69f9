"""Stack config (the `vllm-serving:*` keys) -> typed `StackSettings`, or every error at once.

Both entry points feed this one function: the Pulumi program (config from the engine) and the
offline CLI (config read from `Pulumi.<stack>.yaml`). Errors name the full key
(`vllm-serving:engine.maxModelLen`) and say what to write instead.
"""

from __future__ import annotations

import difflib
import re
import reprlib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from vllm_serving.findings import PROJECT, ConfigError, Finding, Severity, config_key
from vllm_serving.settings import SECRET_KEYS, SECTIONS, StackSettings
from vllm_serving.settings.base import attribute_docs
from vllm_serving.settings.config_hints import (
    choice_fix,
    fraction_fix,
    mapping_fix,
    number_fix,
    spoken_kind,
    text_fix,
    unknown_key,
)
from vllm_serving.settings.shown import shown

# A bad value is quoted, never in full: it may be huge, hostile, or a secret typed in the wrong place.
_QUOTE = reprlib.Repr()  # Python 3.11 takes no keyword arguments here
_QUOTE.maxstring, _QUOTE.maxother, _QUOTE.maxlist, _QUOTE.maxdict, _QUOTE.maxlevel = 40, 40, 6, 6, 2


def _excerpt(value: object) -> str:
    return _QUOTE.repr(value)


def _error(code: str, key: str, message: str, fix: str) -> Finding:
    return Finding(code=code, severity=Severity.ERROR, key=key, message=message, fix=fix)


MAX_FINDINGS = 50
"""Findings worked out in full per stack; each costs a close-match search, and a pasted or hostile
file of 12,000 unknown keys took `check` 17 s of CPU. The rest are counted in one finding."""

TOO_MANY = "config-too-many-problems"

# pydantic's error types (`err["type"]`) for a stack's values, each with its own finding. Every type
# the settings models raise is one of these (tests/settings/test_every_error_type.py walks every key).
MAPPING_TYPES = frozenset({"model_type", "dict_type"})
"""A section, nested setting or env-like mapping given something else."""
TYPE_WANTED: dict[str, str] = {
    "int_type": "int", "int_parsing": "int", "int_from_float": "int",
    "float_type": "float", "float_parsing": "float",
    "bool_type": "bool", "bool_parsing": "bool",
    "string_type": "string", "tuple_type": "list",
}
"""A value of the wrong type -> the type wanted, as the message names it."""
TYPE_EXAMPLE: dict[str, str] = {
    "int": "a whole number such as 8192", "float": "a number such as 0.9", "bool": "true or false",
    "string": "a quoted string", "list": "a YAML list",
}
"""The wanted type -> what to write, when no fix reads the value itself."""
BOUND_WORDS: dict[str, str] = {
    "greater_than": "greater than", "greater_than_equal": "at least", "less_than_equal": "at most",
}
"""A number out of range -> how its bound reads (no setting has an exclusive upper bound)."""
EMPTY_TYPES = frozenset({"string_too_short"})
"""A required text given as ''."""
OWN_TYPES = frozenset({"with_fix", "missing", "extra_forbidden", "literal_error", "string_pattern_mismatch"})
"""The types with a branch of their own below."""
HANDLED_TYPES = OWN_TYPES | MAPPING_TYPES | TYPE_WANTED.keys() | BOUND_WORDS.keys() | EMPTY_TYPES
"""Every error type with a finding of its own; any other falls back to pydantic's message."""


def _too_many(more: int) -> Finding:
    return _error("config-too-many-problems", config_key(), f"and {more} more problems past the first {MAX_FINDINGS}",
                  "fix the ones above first (a stack file with this many is pasted in the wrong place or not a "
                  "stack file), then run vllm-stack check again")


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The settings model a field holds (itself, or inside `X | None` or `tuple[X, ...]`), if any."""
    candidates = getattr(annotation, "__args__", (annotation,))
    return next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)


def _model_at(loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The settings model that owns the key at `loc` (aliases; list indices skipped), for suggestions."""
    model: type[BaseModel] | None = StackSettings
    for part in (p for p in loc if isinstance(p, str)):
        field = _fields(model).get(part)
        model = _model_in(field.annotation if field else None)
    return model


def _fields(model: type[BaseModel] | None) -> dict[str, Any]:
    """A model's fields by the name the stack file spells (its alias); none for no model."""
    return {f.alias or n: f for n, f in (model.model_fields.items() if model else ())}


def _field_doc(loc: tuple[str | int, ...]) -> str | None:
    """The documentation of the key at `loc`; None for a list item, a key of a free mapping, or the
    whole stack (a check across sections raises with no key of its own)."""
    if not loc:
        return None
    parent = _model_at(loc[:-1])
    name = next((n for n, f in (parent.model_fields.items() if parent else ()) if (f.alias or n) == loc[-1]), None)
    return attribute_docs(parent).get(name or "") if parent else None


def _with_doc(fix: str, doc: str | None) -> str:
    return f"{fix} ({doc})" if doc else fix


def _finding_from(err: Any) -> Finding:
    loc: tuple[str | int, ...] = tuple(err["loc"])
    kind: str = err["type"]
    ctx: dict[str, Any] = err.get("ctx") or {}
    key = config_key(*loc)
    dotted = key.removeprefix(f"{PROJECT}:")
    doc = _field_doc(loc)
    value = err.get("input")
    if kind == "with_fix":
        if ctx.get("field") is not None:  # a list index may be 0
            key = config_key(*loc, ctx["field"])
        return _error("config-invalid", key, ctx["message"], ctx["fix"])
    if kind == "missing":
        if len(loc) == 1:
            return _error("config-missing", key, f"the {loc[0]} section is missing",
                          f"add `{PROJECT}:{loc[0]}:` to the stack file ({doc})")
        return _error("config-missing", key, "is required",
                      f"pulumi config set --path '{dotted}' VALUE  ({doc})")
    if kind == "extra_forbidden":
        name = str(loc[-1])
        if name != name.strip():  # quoted in the key, or the space would not show
            key = config_key(*loc[:-1], repr(name))
        known = list(_fields(_model_at(loc[:-1])))
        close = difflib.get_close_matches(name, known)
        message, fix = unknown_key(name, known, close[0] if close else None)
        return _error("config-unknown-key", key, message, fix)
    if kind == "literal_error":
        expected = tuple(re.findall(r"'([^']*)'", str(ctx["expected"])))
        return _error("config-invalid", key, f"{_excerpt(value)} is not allowed",
                      choice_fix(value, expected) or f"write one of {ctx['expected']}")
    if kind in MAPPING_TYPES:
        message, fix = mapping_fix(value, dotted) or (
            f"must be a mapping of keys, got {spoken_kind(value)}", f"write it as YAML keys under {dotted}")
        return _error("config-type", key, message, _with_doc(fix, doc))
    if kind in TYPE_WANTED:
        wanted = TYPE_WANTED[kind]
        fix = (text_fix(value) if wanted == "string" else number_fix(value, wanted)) or f"write {TYPE_EXAMPLE[wanted]}"
        return _error("config-type", key, f"expects {'text' if wanted == 'string' else wanted}, got "
                      f"{_excerpt(value)}", _with_doc(fix, doc))
    if kind in BOUND_WORDS:
        bound = next(iter(ctx.values()))
        return _error("config-range", key, f"{_excerpt(value)} is out of range",
                      f"{fraction_fix(value, bound) or f'write a value {BOUND_WORDS[kind]} {bound}'} ({doc})")
    if kind == "string_pattern_mismatch":
        return _error("config-invalid", key, f"{_excerpt(value)} has the wrong form",
                      f"match the pattern {ctx['pattern']} ({doc})")
    if kind in EMPTY_TYPES:
        return _error("config-invalid", key, "is empty", f"give a value ({doc})")
    return _error("config-invalid", key, err["msg"], _with_doc("see the key in docs/configuration.md", doc))


def section_error(section: str, exc: ValidationError) -> ConfigError:
    """A section validated on its own, reported as if validated within the whole stack."""
    return ConfigError([_finding_from({**err, "loc": (section, *err["loc"])}) for err in exc.errors()])


def _unknown_top_level(key: str, name: str) -> Finding:
    section, dot, rest = name.partition(".")
    if dot and section in SECTIONS:
        # `pulumi config set --path 'engine.maxModelLen' 8192` writes this nested, not as one key
        return _error("config-unknown-key", key, f"unknown config key {shown(name)!r}: a dotted path is not "
                      "a key in the stack file", f"nest it: {shown(rest)} indented under {PROJECT}:{section} "
                      f"(pulumi config set --path '{shown(name)}' VALUE writes it so)")
    close = difflib.get_close_matches(name, [*SECTIONS, *SECRET_KEYS])
    fix = (f"did you mean '{PROJECT}:{close[0]}'? rename the key" if close else
           "remove it; known keys: " + ", ".join([*SECTIONS, *SECRET_KEYS]))
    return _error("config-unknown-key", key, f"unknown config key {shown(name)!r}", fix)


def _secret_section(key: str, name: str) -> Finding:
    """A section holding a `secure:` value: Pulumi marks the whole key secret, so the program reads it
    as one encrypted value; its content is never quoted (the value may be the secret itself)."""
    return _error("config-secret-in-section", key, "holds a `secure:` value inside it: Pulumi then hands the "
                  "program the whole section as one secret, which it cannot read as settings (the value is "
                  "not shown here)", f"write {name} in plain text and keep secrets in "
                  f"{', '.join(SECRET_KEYS)} (pulumi config set --secret KEY)")


def _namespace_and_name(full_key: str) -> tuple[str, str]:
    """As Pulumi's config.ParseKey reads a key: the old `namespace:config:name` form (exactly three
    parts) as `namespace:name`, else split at the first ':'; a bare key has no namespace."""
    parts = full_key.split(":")
    if len(parts) == 3 and parts[1] == "config":
        return parts[0], parts[2]
    namespace, colon, name = full_key.partition(":")
    return (namespace, name) if colon else ("", full_key)


def parse_stack_config(
    values: Mapping[str, Any], secret_keys: frozenset[str] | set[str] = frozenset()
) -> StackSettings:
    """Validate the raw config of one stack.

    `values` maps config keys (`vllm-serving:engine` or bare `engine`) to parsed values; keys of
    other namespaces (provider settings such as `docker:host`) are ignored. `secret_keys` lists
    the keys Pulumi holds as secrets; secret values themselves are never read here.
    """
    findings: list[Finding] = []
    sections: dict[str, Any] = {}
    secrets_set: set[str] = set()
    unreadable: set[str] = set()
    overflow = 0
    for full_key, value in values.items():
        namespace, name = _namespace_and_name(full_key)
        if namespace not in ("", PROJECT):
            continue
        key = config_key(name)
        if name in SECRET_KEYS:
            is_secret = full_key in secret_keys or name in secret_keys
            if not is_secret:
                findings.append(_error(
                    "config-secret-plaintext", key, "is stored in plain text in the stack file",
                    f"remove it and run: pulumi config set --secret {name}"))
            elif value not in (None, ""):
                secrets_set.add(name)
        elif name in SECTIONS and (full_key in secret_keys or name in secret_keys):
            findings.append(_secret_section(key, name))
            unreadable.add(key)
        elif name in SECTIONS:
            sections[name] = value
        elif len(findings) < MAX_FINDINGS:
            findings.append(_unknown_top_level(key, name))
        else:
            overflow += 1
    try:
        # by_name=False: the YAML keys are the camelCase aliases only; a snake_case twin
        # (max_model_len) would bypass every check that reads the raw keys (promotion overrides)
        settings = StackSettings.model_validate({**sections, "secretsSet": frozenset(secrets_set)},
                                                by_name=False)
    except ValidationError as exc:
        # a secret section is not missing: its finding says what is wrong with it
        errors = exc.errors()
        room = max(0, MAX_FINDINGS - len(findings))
        overflow += max(0, len(errors) - room)
        findings += [f for f in map(_finding_from, errors[:room])
                     if f.key not in unreadable or f.code != "config-missing"]
        raise _refusal(findings, overflow) from None
    if findings or overflow:
        raise _refusal(findings, overflow)
    return settings


def _refusal(findings: list[Finding], overflow: int) -> ConfigError:
    """The findings worked out, and those past the cap counted in one."""
    return ConfigError([*findings, _too_many(overflow)] if overflow else findings)
