"""A Pulumi package schema, used to check the inputs a resource registers as its provider would.

Pulumi's mocks accept any property name and any value; the real provider refuses an unknown input,
a value of the wrong type or a missing required input, and rejects a value outside an enum. This
validator applies those checks, from the published schema, to the inputs the mock engine receives
(camelCase, secrets unwrapped, numbers whole again: `tests.pulumi_harness.as_manifest`).
"""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMAS = Path(__file__).resolve().parent / "schemas"
DOCKER_SDK_VERSION = "5.2.0"  # the pulumi-docker SDK that uv.lock pins, which the overlay describes
DOCKER_SCHEMA = SCHEMAS / "pulumi-docker-v5.1.0.schema.min.json"
DOCKER_OVERLAY = SCHEMAS / "pulumi-docker-v5.2.0.overlay.json"
KUBERNETES_PROVIDER_SCHEMA = SCHEMAS / "pulumi-kubernetes-v4.32.0.provider.json"

TYPE_REF = "#/types/"
ANY_REF = "pulumi.json#/Any"
PROVIDER_PREFIX = "pulumi:providers:"
# Inputs the Pulumi SDKs may add to any provider resource; they are not provider config.
PROVIDER_RESERVED = frozenset({"version", "pluginDownloadURL"})

Schema = dict[str, Any]


def _is_integer(value: Any) -> bool:
    # every number crosses the wire as a double: 3.0 is an integer to the provider, 3.5 is not
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


PRIMITIVES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": _is_integer,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def deep_merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `overlay`'s mappings merged key by key and its other values replacing."""
    merged = copy.deepcopy(dict(base))
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _describe(value: Any) -> str:
    text = json.dumps(value, default=str)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


@dataclass(frozen=True)
class ResourceInputs:
    """What one resource type accepts: its input properties and required inputs."""

    label: str  # the head of every message path: `Container`, `RemoteImage`, `Provider`
    properties: Mapping[str, Schema]
    required: tuple[str, ...]
    # A provider's configuration reaches it as strings: the SDK JSON-encodes every non-string value.
    json_encoded: bool = False


class PackageSchema:
    """One provider package's schema (`resources`, `provider`, `types`)."""

    def __init__(self, document: Mapping[str, Any], package: str) -> None:
        self.document = document
        self.package = package
        self.types: Mapping[str, Schema] = document.get("types", {})

    def resource(self, token: str) -> ResourceInputs:
        if token == f"{PROVIDER_PREFIX}{self.package}":
            provider = self.document["provider"]
            return ResourceInputs("Provider", provider.get("inputProperties", {}),
                                  tuple(provider.get("requiredInputs", ())), json_encoded=True)
        if token not in self.document["resources"]:
            raise KeyError(f"{token} is not a resource of the {self.package} schema")
        resource = self.document["resources"][token]
        return ResourceInputs(token.rsplit(":", 1)[-1], resource.get("inputProperties", {}),
                              tuple(resource.get("requiredInputs", ())))

    def validate(self, token: str, inputs: Mapping[str, Any]) -> list[str]:
        """Every problem the provider would find in `inputs`, one message each, with its path."""
        resource = self.resource(token)
        problems: list[str] = []
        reserved = PROVIDER_RESERVED if resource.json_encoded else frozenset()
        values = {k: v for k, v in inputs.items() if k not in reserved}
        if resource.json_encoded:
            values = {k: self._decoded(resource.properties.get(k), v, f"{resource.label}.{k}", problems)
                      for k, v in values.items()}
        self._check_properties(resource.properties, resource.required, values, resource.label,
                               resource.label, problems)
        return problems

    def referenced_types(self, token: str) -> set[str]:
        """Tokens of every type reachable from a resource's inputs, through nested types."""
        found: set[str] = set()
        pending = list(self.resource(token).properties.values())
        while pending:
            spec = pending.pop()
            for ref in _refs(spec):
                name = ref.removeprefix(TYPE_REF)
                if ref.startswith(TYPE_REF) and name not in found and name in self.types:
                    found.add(name)
                    pending.extend(self.types[name].get("properties", {}).values())
        return found

    def _decoded(self, spec: Schema | None, value: Any, path: str, problems: list[str]) -> Any:
        if spec is None or spec.get("type") == "string" or not isinstance(value, str):
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            problems.append(f"{path}: provider config must be JSON text here, got {_describe(value)}")
            return None

    def _check_properties(self, properties: Mapping[str, Schema], required: tuple[str, ...] | list[str],
                          value: Mapping[str, Any], path: str, owner: str, problems: list[str]) -> None:
        for name, item in value.items():
            if item is None:  # an input set to null is simply not set
                continue
            if name not in properties:
                close = difflib.get_close_matches(name, list(properties), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                problems.append(f"{path}.{name}: {owner} has no input '{name}'{hint}")
                continue
            self._check(properties[name], item, f"{path}.{name}", problems)
        for name in required:
            if value.get(name) is None:
                problems.append(f"{path}.{name}: required input of {owner} is missing")

    def _check(self, spec: Schema, value: Any, path: str, problems: list[str]) -> None:
        if "oneOf" in spec:
            attempts = [self._problems_of(alt, value, path) for alt in spec["oneOf"]]
            if all(attempts):
                problems.append(f"{path}: {_describe(value)} matches none of the allowed forms "
                                f"({'; '.join(a[0] for a in attempts)})")
            return
        ref = spec.get("$ref")
        if ref is not None:
            self._check_ref(ref, value, path, problems)
            return
        kind = spec.get("type")
        if kind is None:
            return  # an untyped property accepts anything
        if not PRIMITIVES[kind](value):
            problems.append(f"{path}: expected {kind}, got {_describe(value)}")
            return
        if kind == "array" and "items" in spec:
            for i, item in enumerate(value):
                self._check(spec["items"], item, f"{path}[{i}]", problems)
        elif kind == "object" and "additionalProperties" in spec:
            for key, item in value.items():
                self._check(spec["additionalProperties"], item, f"{path}[{key!r}]", problems)

    def _check_ref(self, ref: str, value: Any, path: str, problems: list[str]) -> None:
        if ref == ANY_REF:
            return
        name = ref.removeprefix(TYPE_REF)
        if not ref.startswith(TYPE_REF) or name not in self.types:
            problems.append(f"{path}: the schema refers to {ref}, which it does not define")
            return
        definition = self.types[name]
        if "enum" in definition:
            allowed = [e["value"] for e in definition["enum"]]
            base = definition.get("type", "string")
            if not PRIMITIVES[base](value):
                problems.append(f"{path}: expected {base} (one of {allowed}), got {_describe(value)}")
            elif value not in allowed:
                problems.append(f"{path}: {value!r} is not one of {allowed}")
            return
        if not isinstance(value, dict):
            problems.append(f"{path}: expected object {name.rsplit(':', 1)[-1]}, got {_describe(value)}")
            return
        self._check_properties(definition.get("properties", {}), definition.get("required", ()),
                               value, path, name.rsplit(":", 1)[-1], problems)

    def _problems_of(self, spec: Schema, value: Any, path: str) -> list[str]:
        found: list[str] = []
        self._check(spec, value, path, found)
        return found


def _refs(spec: Any) -> Iterator[str]:
    """Every `$ref` inside a property schema (items, maps, alternatives)."""
    if isinstance(spec, Mapping):
        if "$ref" in spec:
            yield spec["$ref"]
        for value in spec.values():
            yield from _refs(value)
    elif isinstance(spec, list):
        for value in spec:
            yield from _refs(value)


def load_docker_schema() -> PackageSchema:
    """pulumi-docker's published v5.1.0 schema with the 5.2.0 SDK's additions (see schemas/README.md)."""
    base = json.loads(DOCKER_SCHEMA.read_text())
    overlay = json.loads(DOCKER_OVERLAY.read_text())
    return PackageSchema(deep_merge(base, overlay), "docker")


def load_kubernetes_provider_schema() -> PackageSchema:
    """pulumi-kubernetes' Provider inputs (v4.32.0, see schemas/README.md); its objects are checked
    against the Kubernetes OpenAPI schema instead."""
    return PackageSchema(json.loads(KUBERNETES_PROVIDER_SCHEMA.read_text()), "kubernetes")
