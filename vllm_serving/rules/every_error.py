"""Every error of a stack in one run: config errors, then what the catalogs and the rules say
about the rest of the stack.

Validation stops at the first stage that fails: a type error leaves no settings to look the GPU
up in, an unknown GPU no spec to run the rules on. So after config errors the stack is built
again without the offending keys (their defaults stand in), and what that second build finds -
catalog errors, rule findings - is added, except what could be about a stand-in rather than
the stack: a finding on a removed key itself or a key under it (TP 1 for a TP that did not parse,
or for an engine section that was empty), a repeat of a
first-stage error (a misspelt `model.nmae` also leaves `model.name` missing), and the memory
findings when a key they are computed from (engine, hardware, model) was removed. A waiver
with a bad field is removed whole, and the second build's waiver errors are left out: a stand-in
can raise or hide what a waiver matches, and a removed waiver renumbers the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from vllm_serving.findings import PROJECT, ConfigError, Finding, by_urgency, config_key
from vllm_serving.rules import check
from vllm_serving.rules.capacity_rules import RULES as CAPACITY_RULES
from vllm_serving.rules.waivers import WAIVER_CODES
from vllm_serving.settings.stack_config import TOO_MANY, parse_stack_config
from vllm_serving.spec import ServingSpec, resolve

Build = Callable[[Mapping[str, Any]], ServingSpec]
"""Raw config values -> a resolved spec, or ConfigError."""

_PART = re.compile(r"[^.\[\]]+|\[\d+\]")


def key_path(key: str) -> list[str | int] | None:
    """`vllm-serving:kubernetes.tolerations[0].key` -> ["kubernetes", "tolerations", 0, "key"];
    None for a key that is not a config key (a stack file's path)."""
    prefix = f"{PROJECT}:"
    if not key.startswith(prefix):
        return None
    return [int(p[1:-1]) if p.startswith("[") else p for p in _PART.findall(key.removeprefix(prefix))]


def _without(value: Any, path: list[str | int]) -> Any:
    """`value` with the item at `path` removed (unchanged when there is none)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(value, Mapping) and isinstance(head, str) and head in value:
        if not rest:
            return {k: v for k, v in value.items() if k != head}
        return {**value, head: _without(value[head], rest)}
    if isinstance(value, list) and isinstance(head, int) and 0 <= head < len(value):
        if not rest:
            return value[:head] + value[head + 1:]
        return [*value[:head], _without(value[head], rest), *value[head + 1:]]
    return value


def without_keys(values: Mapping[str, Any], keys: set[str]) -> dict[str, Any]:
    """The raw config without the config keys named (values keyed `vllm-serving:section` or `section`)."""
    out = dict(values)
    for key in keys:
        path = key_path(key)
        if not path:
            continue
        section = str(path[0])
        raw = next((k for k in (f"{PROJECT}:{section}", section) if k in out), None)
        if raw is None:
            continue
        if len(path) == 1:
            del out[raw]
        else:
            out[raw] = _without(out[raw], path[1:])
    return out


# The memory plan reads every engine, hardware and model key: with one of them replaced by its
# default, its findings describe a stack nobody wrote.
_CAPACITY_CODES = frozenset(rule.code for rule in CAPACITY_RULES)
_CAPACITY_INPUTS = frozenset({"engine", "hardware", "model"})


# Required keys a stack cannot be built without: a bad value is replaced by a neutral one (rather
# than removed) so the rest of the stack still gets checked; findings on these keys are dropped.
_STAND_INS: dict[str, Any] = {
    f"{PROJECT}:model.hostPath": "/stand-in/weights",
    f"{PROJECT}:model.volumeName": "stand-in-weights",
    f"{PROJECT}:model.containerPath": "/stand-in/model",
    f"{PROJECT}:cache.hostPath": "/stand-in/cache",
    f"{PROJECT}:kubernetes.namespace": "stand-in",
}


def _with_stand_ins(values: Mapping[str, Any], keys: set[str]) -> dict[str, Any]:
    out = dict(values)
    for key in keys & _STAND_INS.keys():
        path = key_path(key)
        assert path is not None and len(path) == 2
        raw = next((k for k in (f"{PROJECT}:{path[0]}", str(path[0])) if k in out), None)
        if raw is not None and isinstance(out[raw], Mapping):
            out[raw] = {**out[raw], str(path[1]): _STAND_INS[key]}
    return out


# A model is given by exactly one of these: with the one given removed, the second build's "give
# exactly one of model.name, ..." is about the removal, not the stack.
_MODEL_SOURCES = frozenset(config_key("model", k) for k in ("name", "architecture", "configFile"))


def _whole_waiver(key: str) -> str:
    """`vllm-serving:waivers[2].reason` -> `vllm-serving:waivers[2]`: a waiver without a valid
    code or reason waives nothing, so the entry goes rather than the field."""
    path = key_path(key)
    if path and len(path) > 2 and path[0] == "waivers" and isinstance(path[1], int):
        return config_key("waivers", path[1])
    return key


def _section(key: str) -> str | None:
    path = key_path(key)
    return str(path[0]) if path else None


def _inside(key: str, removed: set[str]) -> bool:
    """`key` is a removed key or lies under one (`engine.tensorParallelSize` of a removed `engine`):
    a finding there is about the default that stood in, not about the stack."""
    return any(key == r or key.startswith((f"{r}.", f"{r}[")) for r in removed)


def every_finding(values: Mapping[str, Any], build: Build) -> list[Finding]:
    """All findings of one stack's raw config: errors first, then warnings."""
    try:
        return check(build(values))
    except ConfigError as exc:
        first = list(exc.findings)
    if any(f.code == TOO_MANY for f in first):
        return first  # not a stack to build again: its next problems would be counted again
    keys = {_whole_waiver(f.key) for f in first}
    if keys & _MODEL_SOURCES:
        keys |= _MODEL_SOURCES
    stripped = _with_stand_ins(without_keys(values, keys - _STAND_INS.keys()), keys)
    if stripped == dict(values):
        return first
    stand_in_memory = bool({_section(key) for key in keys} & _CAPACITY_INPUTS)
    try:
        later = check(build(stripped))
    except ConfigError as exc:
        later = list(exc.findings)
        # a required key the removal left missing (a volume's containerPath): stand in, once more
        missing = {f.key for f in later} & _STAND_INS.keys()
        if missing:
            keys |= missing
            try:
                later = check(build(_with_stand_ins(stripped, missing)))
            except ConfigError as again:
                later = list(again.findings)
    # every first-stage key is in `keys`, so a repeat of a first-stage error is inside one too
    later = [f for f in later if not _inside(f.key, keys)
             and not (stand_in_memory and f.code in _CAPACITY_CODES) and f.code not in WAIVER_CODES]
    return by_urgency(first + later)


def stack_build(secret_keys: frozenset[str] | set[str], stack: str, project_dir: Path | None = None) -> Build:
    """How a stack without release.promoteFrom is built: validate, then join the catalogs
    (`project_dir` is where a relative model.configFile is read from)."""
    return lambda values: resolve(parse_stack_config(values, secret_keys), stack, project_dir=project_dir)
