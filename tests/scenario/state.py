"""What the scenario engine keeps and exchanges: the state's entries, a registration, a diff, a
step, and the ignoreChanges and replaceOnChanges paths as pulumi's step generator reads them
(pkg/resource/deploy/step_generator.go v3.259.0; sdk/go/common/resource/properties_path.go)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

INIT_ERROR = "#initerror"
PROVIDERS = "pulumi:providers:"


class StepFailed(Exception):
    """A step the provider or the engine refused; the run stops."""


class InitError(StepFailed):
    """The object exists but did not initialise (a health wait, an await): kept with an init error."""

    def __init__(self, message: str, ident: str, outputs: dict[str, Any]) -> None:
        super().__init__(message)
        self.ident = ident
        self.outputs = outputs


@dataclass
class Entry:
    """One resource of the state."""

    urn: str
    type: str
    name: str
    id: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    provider: str = ""
    protect: bool = False
    retain_on_delete: bool = False
    init_errors: tuple[str, ...] = ()
    external: bool = False


@dataclass(frozen=True)
class Goal:
    """One registration: what the program asks for and the options it set."""

    urn: str
    type: str
    name: str
    inputs: dict[str, Any]
    provider: str
    protect: bool
    retain_on_delete: bool
    delete_before_replace: bool | None
    ignore_changes: tuple[str, ...]
    replace_on_changes: tuple[str, ...]


@dataclass
class Diff:
    changed: list[str] = field(default_factory=list)
    replace: list[str] = field(default_factory=list)
    delete_before_replace: bool = False
    """The provider's own choice when the program does not set the option."""


class Provider(Protocol):
    def create(self, goal: Goal, config: dict[str, Any]) -> tuple[str, dict[str, Any]]: ...
    def diff(self, old: Entry, goal: Goal) -> Diff: ...
    def update(self, old: Entry, goal: Goal, config: dict[str, Any]) -> dict[str, Any]: ...
    def delete(self, entry: Entry, config: dict[str, Any]) -> None: ...
    def read(self, entry: Entry, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None: ...
    def get(self, type_: str, ident: str, config: dict[str, Any]) -> dict[str, Any]: ...
    def config_replaces(self, old: dict[str, Any], new: dict[str, Any]) -> bool: ...


class Step(NamedTuple):
    op: str
    name: str
    type: str


@dataclass
class Outcome:
    ok: bool
    error: str
    steps: list[Step]
    outputs: dict[str, Any]

    def of(self, name: str, type_suffix: str = "") -> list[str]:
        """The operations on one resource, by its name (and the end of its type), in order."""
        return [s.op for s in self.steps if s.name == name and s.type.endswith(type_suffix)]


def parse_path(path: str) -> list[str]:
    """`logOpts.max-size` -> ["logOpts", "max-size"] (a key runs to the next `.`, as in properties_path.go)."""
    return path.split(".")


def path_covers(outer: str, inner: str) -> bool:
    """PropertyPath.Contains: `*` matches any one key."""
    a, b = parse_path(outer), parse_path(inner)
    return len(a) <= len(b) and all(x in ("*", y) for x, y in zip(a, b, strict=False))


def reset_ignored(inputs: dict[str, Any], old_inputs: dict[str, Any], paths: tuple[str, ...]) -> dict[str, Any]:
    """`processIgnoreChanges`: each ignored path of `inputs` takes its value in `old_inputs` (for the
    diff and an update; a replacement is created from the program's values, engine.py)."""
    out = copy.deepcopy(inputs)
    for path in paths:
        *parents, leaf = parse_path(path)
        old: Any = old_inputs
        new: Any = out
        for key in parents:
            old = old.get(key) if isinstance(old, dict) else None
            new = new.get(key) if isinstance(new, dict) else None
        if not isinstance(new, dict):
            continue
        if isinstance(old, dict) and leaf in old:
            new[leaf] = copy.deepcopy(old[leaf])
        else:
            new.pop(leaf, None)
    return out


def apply_replace_on_changes(diff: Diff, replace_on_changes: tuple[str, ...], has_init_errors: bool) -> Diff:
    """`applyReplaceOnChanges` (line 3122): a changed key under a replaceOnChanges path replaces, and
    so does an old state with init errors when a path covers `#initerror`."""
    replace = list(diff.replace)
    replace += [key for key in diff.changed
                if key not in replace and any(path_covers(p, key) for p in replace_on_changes)]
    if has_init_errors and any(path_covers(p, INIT_ERROR) for p in replace_on_changes):
        replace.append(INIT_ERROR)
    return Diff(list(diff.changed), replace, diff.delete_before_replace)
