"""Validate a LeaderWorkerSet against the LWS CRD's published schema (tests/fixtures/crds/, LWS
v0.10.0), with kubectl's strict field validation (tests/crd_schema.py)."""

from __future__ import annotations

from typing import Any

from tests.crd_schema import crd_errors
from tests.paths import FIXTURES

CRD = FIXTURES / "crds" / "leaderworkerset.x-k8s.io_leaderworkersets.yaml"


def lws_errors(obj: dict[str, Any]) -> list[str]:
    """Every schema violation of `obj`, as `path: message`; empty when it is valid."""
    return crd_errors(CRD, obj)
