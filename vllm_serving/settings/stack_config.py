"""Stack config (the `vllm-serving:*` keys) -> typed `StackSettings`, or every error at once.

Both entry points feed this one function: the Pulumi program (config from the engine) and the
offline CLI (config read from `Pulumi.<stack>.yaml`). Errors name the full key
(`vllm-serving:engine.maxModelLen`) and say what to write instead.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from vllm_serving.findings import PROJECT, ConfigError, Finding, Severity, config_key
from vllm_serving.settings import SECRET_KEYS, SECTIONS, StackSettings

# A bad value is quoted, never in full: it may be huge, hostile, or a secret typed in the wrong place.
_QUOTE = reprlib.Repr()  # Python 3.11 takes no keyword arguments here
_QUOTE.maxstring, _QUOTE.maxother, _QUOTE.maxlist, _QUOTE.maxdict, _QUOTE.maxlevel = 40, 40, 6, 6, 2


def _excerpt(value: object) -> str:
    return _QUOTE.repr(value)


def _error(code: str, key: str, message: str, fix: str) -> Finding:
    return Finding(code=code, severity=Severity.ERROR, key=key, message=message, fix=fix)


# Keys people write by habit that mean something else here: key (lower case) -> the fix.
KEY_HINTS: dict[str, str] = {
    "password": "secrets are not config values: remove it and run pulumi config set --secret registryPassword",
    "registrypassword": "remove it and run: pulumi config set --secret registryPassword",
    "apikey": "remove it and run: pulumi config set --secret apiKey",
    "hftoken": "remove it and run: pulumi config set --secret hfToken",
    "version": "the image version is image.tag (e.g. v0.19.1); rename the key",
}


def _model_at(loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The settings model that owns the key at `loc` (aliases), for suggestions."""
    model: type[BaseModel] | None = StackSettings
    for part in loc:
        if model is None or isinstance(part, int):
            continue
        field = next(
            (f for n, f in model.model_fields.items() if part in (n, f.alias)), None
        )
        if field is None:
            return model
        annotation = field.annotation
        candidates = getattr(annotation, "__args__", (annotation,))
        model = next(
            (c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None
        )
    return model


def _aliases(model: type[BaseModel] | None) -> list[str]:
    if model is None:
        return []
    return [f.alias or n for n, f in model.model_fields.items() if n != "secrets_set"]


def _field_doc(loc: tuple[str | int, ...]) -> str | None:
    parent = _model_at(loc[:-1]) if loc else None
    if parent is None or not loc or isinstance(loc[-1], int):
        return None
    for name, field in parent.model_fields.items():
        if loc[-1] in (name, field.alias):
            return field.description
    return None


def _finding_from(err: Any) -> Finding:
    loc: tuple[str | int, ...] = tuple(err["loc"])
    kind: str = err["type"]
    ctx: dict[str, Any] = err.get("ctx") or {}
    key = config_key(*loc)
    dotted = key.split(":", 1)[1]
    doc = _field_doc(loc)
    if kind == "with_fix":
        if ctx.get("field"):
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
        known = _aliases(_model_at(loc[:-1]))
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        fix = KEY_HINTS.get(name.lower()) or (
            f"did you mean '{close[0]}'? rename the key" if close
            else "remove it; known keys here: " + ", ".join(known))
        return _error("config-unknown-key", key, f"unknown key '{name}'", fix)
    if kind == "literal_error":
        return _error("config-invalid", key, f"{_excerpt(err.get('input'))} is not allowed",
                      f"write one of {ctx.get('expected')}")
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return _error("config-type", key, f"must be a mapping of keys, got {type(err.get('input')).__name__}",
                      f"write it as YAML keys under {dotted} ({doc})")
    if kind.endswith(("_type", "_parsing")) or kind in ("bool_parsing",):
        wanted = kind.split("_")[0]
        example = {"int": "a whole number such as 8192", "float": "a number such as 0.9",
                   "bool": "true or false", "string": "a quoted string",
                   "tuple": "a YAML list", "list": "a YAML list"}.get(wanted, wanted)
        return _error("config-type", key, f"expects {wanted}, got {_excerpt(err.get('input'))}",
                      f"write {example} ({doc})" if doc else f"write {example}")
    bound_words = {"greater_than": "greater than", "greater_than_equal": "at least",
                   "less_than": "less than", "less_than_equal": "at most"}
    if kind in bound_words:
        bound = next(iter(ctx.values()))
        return _error("config-range", key, f"{_excerpt(err.get('input'))} is out of range",
                      f"write a value {bound_words[kind]} {bound} ({doc})")
    if kind == "string_pattern_mismatch":
        return _error("config-invalid", key, f"{_excerpt(err.get('input'))} has the wrong form",
                      f"match the pattern {ctx.get('pattern')} ({doc})")
    if kind in ("string_too_short", "too_short"):
        return _error("config-invalid", key, "is empty", f"give a value ({doc})")
    return _error("config-invalid", key, err["msg"], f"see the key's documentation: {doc}")


def section_error(section: str, exc: ValidationError) -> ConfigError:
    """A section validated on its own, reported as if validated within the whole stack."""
    return ConfigError([_finding_from({**err, "loc": (section, *err["loc"])}) for err in exc.errors()])


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
    for full_key, value in values.items():
        namespace, _, name = full_key.rpartition(":")
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
        elif name in SECTIONS:
            sections[name] = value
        else:
            close = difflib.get_close_matches(name, [*SECTIONS, *SECRET_KEYS], n=1, cutoff=0.6)
            fix = (f"did you mean '{PROJECT}:{close[0]}'? rename the key" if close else
                   "remove it; known keys: " + ", ".join([*SECTIONS, *SECRET_KEYS]))
            findings.append(_error("config-unknown-key", key, f"unknown config key '{name}'", fix))
    try:
        settings = StackSettings.model_validate({**sections, "secretsSet": frozenset(secrets_set)})
    except ValidationError as exc:
        findings += [_finding_from(e) for e in exc.errors()]
        settings = None
    if findings:
        raise ConfigError(findings)
    assert settings is not None
    return settings
