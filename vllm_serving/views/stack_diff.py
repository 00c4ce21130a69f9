"""What differs between two stacks' resolved deployments: the reviewer's view of a promotion.

Both sides are flattened from `deployment_plan` into sections of key -> text, so a change reads
as one line; settings the plan does not show (the preflight, observability, Kubernetes objects,
log rotation, ...) are compared as the stack sets them (`SETTINGS_KEYS`). The vLLM argv is
compared per flag, mounts by container path, ports by container port and env by name: a flag
added in the middle shifts no other line. Secret env vars appear by name only; their values are
never in a spec to begin with.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, get_args

import msgspec
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from vllm_serving.engine.flags import FLAGS
from vllm_serving.fleet import as_one_host, fleet_hosts, is_fleet
from vllm_serving.rules import check
from vllm_serving.settings.base import Seconds, SizeBytes
from vllm_serving.spec import ServingSpec
from vllm_serving.units import go_duration, kubernetes_quantity
from vllm_serving.views.fleet import fleet_plan
from vllm_serving.views.plan import deployment_plan

# Compared sections, in the order a reviewer reads them (and the order of the changes).
SECTIONS = ("target", "hosts", "gpu", "model", "image", "release", "argv", "env", "mounts", "ports",
            "network", "container", "kubernetes", "preflight", "endpoints", "capacity", "observability",
            "waivers")

ALL = None
"""Every key of the settings section (but those in SHOWN_ELSEWHERE)."""
# Settings that change what is deployed, checked or watched without showing in the plan's facts
# above (objects and options beside the container, the preflight, the alerts): compared as the
# stack sets them, defaults included, under the diff section of the same name. A Docker stack's
# kubernetes keys are its defaults, so Docker -> Kubernetes lists what the cluster stack sets.
SETTINGS_KEYS: dict[str, tuple[str, ...] | None] = {
    "target": ("sshOpts",),
    "image": ("pullTimeout",),
    "model": ("protect",),
    "network": ("behindProxy",),
    "container": ("stopGracePeriod", "logMaxSize", "logMaxFiles"),
    "kubernetes": ALL,
    "preflight": ALL,
    "observability": ALL,
    "capacity": ALL,
}
# Keys of the settings sections taken whole that the plan already shows, one line per fact:
# container (namespace, replicas, node selector, runtime class), gpu.given (the GPU resource),
# ports (the Service) and mounts (claims and paths of the weights, /dev/shm).
SHOWN_ELSEWHERE = frozenset({
    "kubernetes.namespace", "kubernetes.replicas", "kubernetes.nodeSelector", "kubernetes.runtimeClassName",
    "kubernetes.gpuResource", "kubernetes.service.type", "kubernetes.service.port",
    "kubernetes.weights.existingClaim", "kubernetes.weights.hostPath", "kubernetes.shmSize",
})

SECRET_VALUE = "<secret>"
"""Stands for a secret env var's value, which only Pulumi holds."""

POSITIONAL = "(positional)"
"""Key of the argv words that belong to no flag, kept in their order."""

# Capacity repeats the GPU and model sections under these keys; one line per fact is enough.
_CAPACITY_REPEATS = ("gpu", "model")
# Modelled flags sort in the order the argv renders them; anything else follows.
_FLAG_RANK = {flag.flag: i for i, flag in enumerate(FLAGS)}

Section = dict[str, str]
View = dict[str, Section]


class Change(msgspec.Struct, frozen=True):
    """One key whose value differs between stack A and stack B."""

    section: str
    """One of SECTIONS."""
    key: str
    """Field, flag, env name, container path or container port, within the section."""
    a: str | None
    """Value in stack A; None when A does not set it."""
    b: str | None
    """Value in stack B; None when B does not set it."""

    @property
    def kind(self) -> Literal["added", "removed", "changed"]:
        if self.a is None:
            return "added"
        return "removed" if self.b is None else "changed"

    def as_dict(self) -> dict[str, str | None]:
        return {"section": self.section, "key": self.key, "a": self.a, "b": self.b, "kind": self.kind}


def _text(value: Any) -> str | None:
    """One comparable text per value; None stays None (unset)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def _fields(data: Mapping[str, Any], keys: Iterable[str] | None = None) -> Section:
    """The set fields of a plan mapping, as text; unset (None) fields are left out."""
    out: Section = {}
    for key in data if keys is None else keys:
        text = _text(data.get(key))
        if text is not None:
            out[key] = text
    return out


def _is_flag(word: str) -> bool:
    if not word.startswith("-") or word in ("-", "--"):
        return False
    try:
        float(word)  # a negative number is a value, not a flag
    except ValueError:
        return True
    return False


def parse_argv(argv: Sequence[str]) -> Section:
    """Flag -> value, in first-seen order: `--flag` alone is "true", `--no-flag` is
    `--flag: false`, `--flag=value` splits; a repeated flag keeps all its values; words that
    follow no flag go, in order, under POSITIONAL."""
    values: dict[str, list[str]] = {}
    positional: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if not _is_flag(word):
            positional.append(word)
            i += 1
            continue
        name, eq, value = word.partition("=")
        # vLLM's parser accepts --max_model_len for --max-model-len, as the settings check does
        name = name.replace("_", "-")
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if eq:
            i += 1
        elif nxt is not None and not _is_flag(nxt):
            value, i = nxt, i + 2
        else:
            value, i = "true", i + 1
            if name.startswith("--no-"):  # argparse's BooleanOptionalAction negation
                name, value = "--" + name.removeprefix("--no-"), "false"
        values.setdefault(name, []).append(value)
    out = {name: vs[0] if len(vs) == 1 else shlex.join(vs) for name, vs in values.items()}
    if positional:
        out[POSITIONAL] = shlex.join(positional)
    return out


def _facts(data: Mapping[str, Any], prefix: str) -> Section:
    """Nested facts flattened to `prefix.key.sub` -> text; unset facts are left out."""
    out: Section = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out |= _facts(value, f"{prefix}.{key}")
        elif (text := _text(round(value, 2) if isinstance(value, float) else value)) is not None:
            out[f"{prefix}.{key}"] = text  # GiB and billions to 2 decimals, as the plan shows them
    return out


def _settings_facts(model: BaseModel, keys: tuple[str, ...] | None, prefix: str) -> Section:
    """A settings section's keys (camelCase, nested sections flattened to `a.b`) as text; unset
    (None) keys and those in SHOWN_ELSEWHERE are left out."""
    dumped = model.model_dump(mode="json", by_alias=True)
    out: Section = {}
    for name, field in type(model).model_fields.items():
        key = field.alias or name
        if (keys is not None and key not in keys) or f"{prefix}.{key}" in SHOWN_ELSEWHERE:
            continue
        value = getattr(model, name)
        if isinstance(value, BaseModel):  # a nested section: one line per key
            out |= {f"{key}.{k}": v for k, v in _settings_facts(value, ALL, f"{prefix}.{key}").items()}
        elif value is not None:
            unit = next((show for marker, show in _UNITS if _marks(field, marker)), None)
            text: str | None
            if unit is not None:
                text = unit(value)
            elif isinstance(value, float) and value.is_integer():
                text = str(int(value))  # `minConcurrency: 4` reads back as written, not 4.0
            else:
                text = _text(dumped[key])
            if text is not None:
                out[key] = text
    return out


# Byte sizes and durations in units a reader takes in (`64Gi`, `30s`), not in bytes and seconds.
_UNITS: tuple[tuple[Any, Callable[[int], str]], ...] = (
    (get_args(SizeBytes)[1], kubernetes_quantity), (get_args(Seconds)[1], go_duration))


def _marks(field: FieldInfo, marker: Any) -> bool:
    """The field's type is the Annotated one `marker` belongs to, optional or not."""
    inner = (getattr(arg, "__metadata__", ()) for arg in get_args(field.annotation))
    return marker in field.metadata or any(marker in metadata for metadata in inner)


def _mount(m: Mapping[str, Any]) -> str:
    return f"{m['source']} ({'read-only' if m['readOnly'] else 'writable'}, {m['kind']})"


def _port(p: Mapping[str, Any]) -> str:
    if "service" in p:
        return f"Service {p['service']} :{p['port']}"
    return f"{p['bindAddress']}:{p['hostPort']}"


def stack_view(spec: ServingSpec, per_host: bool = False) -> View:
    """The comparable facts of one stack, by section, as key -> text; `per_host` (a fleet is on
    either side) lists each host by id under `hosts`, its URLs with it instead of under endpoints."""
    # Findings are `check`'s business; the diff compares what would be deployed (and, under
    # waivers, what each stack lets through).
    hosts = (fleet_hosts(spec) or (as_one_host(spec),)) if per_host else ()
    plan = fleet_plan(spec, hosts, []) if hosts else deployment_plan(spec, [])
    env = _fields(plan["env"]) | {name: SECRET_VALUE for name in plan["secretEnv"]}
    capacity = {k: v for k, v in _fields(plan["capacity"]).items() if k not in _CAPACITY_REPEATS}
    view = {
        "target": _fields(plan["target"], ("kind", "where")),
        # by host id: a host added, removed or changed is one line
        "hosts": {v["name"]: f"{v['dockerHost'] or 'local Docker socket'}, GPUs {v['gpusGiven']}, {v['baseUrl']}"
                  for v in plan["fleet"]["hosts"]} if hosts else {},
        "gpu": _fields(plan["gpu"], ("name", "hostCount", "given")),
        # the resolved facts, so an edit to an inline architecture (same name) shows too
        "model": _fields(plan["model"], ("name", "servedModelName"))
        | _facts(spec.model.model_dump(by_alias=True), "architecture"),
        "image": _fields(plan["image"], ("reference", "registryUser")),
        # where the release comes from; its flags are compared one by one under argv
        "release": _fields(plan["release"], ("promotedFrom",)),
        "argv": parse_argv(plan["vllmArgs"]),
        "env": env,
        "mounts": {m["target"]: _mount(m) for m in plan["mounts"]},
        "ports": {str(p["containerPort"]): _port(p) for p in plan["ports"]},
        "network": {},
        "container": _fields(plan["container"]),
        "kubernetes": {},
        "preflight": {},
        "endpoints": _fields(plan["endpoints"]),
        "capacity": capacity,
        "observability": {},
        "waivers": _waivers(spec),
    }
    for section, keys in SETTINGS_KEYS.items():
        view[section] |= _settings_facts(getattr(spec.settings, section), keys, section)
    return view


def _waivers(spec: ServingSpec) -> Section:
    """Each waiver by code (and key) -> its reason and what it sets aside in this stack, so a
    waiver added, dropped or reworded shows, and so does an error it lets through."""
    waived = [f for f in check(spec) if f.waived is not None]
    out: Section = {}
    for waiver in spec.settings.waivers:
        hits = sorted({f"{f.severity.value} at {f.key}" for f in waived
                       if f.code == waiver.code and waiver.key in (None, f.key)})
        covers = f"sets aside {', '.join(hits)}" if hits else "sets aside nothing: vllm-stack check says why"
        out[f"{waiver.code} [{waiver.key}]" if waiver.key else waiver.code] = f"{waiver.reason} ({covers})"
    return out


def _key_order(section: str, a: Section, b: Section) -> list[str]:
    keys = list(dict.fromkeys([*a, *b]))  # first-seen order: A's, then B's own
    if section == "argv":
        # sorted() is stable: unmodelled flags keep their first-seen order after the modelled
        return sorted(keys, key=lambda k: _FLAG_RANK.get(k, len(_FLAG_RANK)))
    # ports are numbers: 8000 before 30006
    return sorted(keys, key=lambda k: (0, int(k), "") if k.isdigit() else (1, 0, k))


def diff_views(a: View, b: View) -> list[Change]:
    """Every key whose text differs, in SECTIONS order, then key order."""
    changes: list[Change] = []
    for section in SECTIONS:
        sa, sb = a.get(section, {}), b.get(section, {})
        for key in _key_order(section, sa, sb):
            if sa.get(key) != sb.get(key):
                changes.append(Change(section, key, sa.get(key), sb.get(key)))
    return changes


def stack_diff(a: ServingSpec, b: ServingSpec) -> list[Change]:
    """What changes when stack A's deployment is replaced by stack B's; empty when identical.
    With a fleet on either side both are compared host by host (hosts matched by id)."""
    per_host = is_fleet(a) or is_fleet(b)
    return diff_views(stack_view(a, per_host), stack_view(b, per_host))
