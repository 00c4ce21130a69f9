"""Validate a custom resource against its CRD's published OpenAPI schema, as the API server would.

The schema is the `openAPIV3Schema` of a CRD vendored in tests/fixtures/crds/ (each file's header
says where it came from). A CRD's structural schema is JSON Schema with `x-kubernetes-*`
extensions, which jsonschema ignores. Unknown fields: the API server drops them, and `kubectl
apply` (strict field validation, its default) rejects them; here every object that lists its
properties and does not preserve unknown fields gets `additionalProperties: false`, so a misspelt
field fails as with kubectl.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml


def _strict(schema: Any) -> Any:
    """kubectl's strict field validation: an object that lists its properties takes no others."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _strict(value) for key, value in schema.items()}
    if "properties" in out and "additionalProperties" not in out \
            and not out.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


@cache
def crd_validator(path: Path, version: str = "v1") -> jsonschema.protocols.Validator:
    crd = yaml.safe_load(path.read_text(encoding="utf-8"))
    served = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    schema = _strict(served["schema"]["openAPIV3Schema"])
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft4Validator)
    return validator_class(schema)


def crd_errors(path: Path, obj: dict[str, Any], version: str = "v1") -> list[str]:
    """Every violation of the CRD's published schema, as `path: message`; empty when valid."""
    errors = crd_validator(path, version).iter_errors(obj)
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
            for e in sorted(errors, key=lambda e: list(map(str, e.absolute_path)))]


CRDS = Path(__file__).resolve().parent / "fixtures" / "crds"
LWS_V0_8 = CRDS / "leaderworkerset-v0.8.0.status-only.yaml"
"""A LeaderWorkerSet CRD from before `status.observedGeneration` (v0.8.0), its schema cut to the status."""


def _load(path: Path) -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader reads the 400 KB CRD 7x faster
    loaded: dict[str, Any] = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    return loaded


@cache
def _status_only(path: Path) -> dict[str, Any]:
    crd = _load(path)
    for version in crd["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]
        kept = {key: value for key, value in schema.get("properties", {}).items() if key == "status"}
        version["schema"]["openAPIV3Schema"] = {"type": schema.get("type", "object"), "properties": kept}
    return crd


def read_crd(name: str, path: Path | None = None) -> dict[str, Any]:
    """A CRD as `CustomResourceDefinition.get` returns it from a cluster that has the vendored one
    (`tests/fixtures/crds/<group>_<plural>.yaml`, controller-gen's file name), or the one at `path`.

    Each version's schema is cut to its `status`, the part the program reads: the LeaderWorkerSet
    CRD is 400 KB, and the mock engine would pass all of it through every run."""
    plural, group = name.split(".", 1)
    crd = copy.deepcopy(_status_only(path or CRDS / f"{group}_{plural}.yaml"))
    assert crd["metadata"]["name"] == name, f"{path} holds {crd['metadata']['name']}, not {name}"
    return crd
