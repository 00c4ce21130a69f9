"""Compatibility rules: hardware, model and engine facts checked before anything is deployed."""

from __future__ import annotations

from ..deployment_spec import DeploymentSpec
from ..findings import Finding


def check(spec: DeploymentSpec) -> list[Finding]:
    """Every finding for `spec`, errors first. Rules arrive with issue 3; none yet."""
    return []
