"""The Pulumi program: read the stack config, refuse what cannot work, build the backend.

Nothing is registered until the settings, the catalogs and the compatibility rules agree, so a
bad config fails `pulumi preview` with the key and the fix and leaves no half deployment.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from .core.capacity import plan_capacity
from .core.deployment_spec import DeploymentSpec, resolve
from .core.findings import PROJECT, ConfigError, Finding, Severity
from .core.rules import check
from .core.settings import SECRET_KEYS
from .core.stack_config import parse_stack_config


def _raw_config() -> tuple[dict[str, Any], set[str]]:
    """Every `vllm-serving:*` key the engine passed, JSON objects decoded, plus the secret keys."""
    merged = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    values: dict[str, Any] = {}
    secret_keys: set[str] = set()
    for key, raw in merged.items():
        if not key.startswith(f"{PROJECT}:"):
            continue
        if runtime_config.is_config_secret(key):
            secret_keys.add(key)
            values[key] = "[secret]"  # never read the value here; get_secret() does that
            continue
        try:
            values[key] = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            values[key] = raw
    return values, secret_keys


# Offline, a stack file cannot show whether a secret is set, so these rules only warn there.
# Under Pulumi the config is complete: a missing secret would fail mid-deployment, so block.
BLOCKING_WHEN_DEPLOYING = frozenset({"registry-password-missing"})


def _deploy_severity(finding: Finding) -> Finding:
    if finding.code in BLOCKING_WHEN_DEPLOYING:
        return dataclasses.replace(finding, severity=Severity.ERROR)
    return finding


def checked_spec() -> DeploymentSpec:
    """Settings from the engine's config, resolved and checked; warnings go to Pulumi's log."""
    values, secret_keys = _raw_config()
    settings = parse_stack_config(values, secret_keys)
    spec = resolve(settings, pulumi.get_stack())
    findings = [_deploy_severity(f) for f in check(spec)]
    errors = [f for f in findings if f.severity is Severity.ERROR]
    for warning in (f for f in findings if f.severity is Severity.WARNING):
        pulumi.log.warn(warning.line())
    if errors:
        raise ConfigError(errors)
    return spec


def _secrets(spec: DeploymentSpec) -> dict[str, pulumi.Output[str]]:
    config = pulumi.Config(PROJECT)
    found = {key: config.get_secret(key) for key in SECRET_KEYS if key in spec.settings.secrets_set}
    return {key: value for key, value in found.items() if value is not None}


def build() -> dict[str, Any]:
    """Build the deployment for the current stack and return the values to export.

    The backend's Pulumi package is imported only when the stack uses it.
    """
    try:
        spec = checked_spec()
    except ConfigError as exc:
        # RunError prints the message alone: the operator needs the keys, not a traceback
        raise pulumi.RunError(str(exc)) from None
    secrets = _secrets(spec)
    capacity = {"capacity": plan_capacity(spec).as_dict()}
    if spec.settings.target.kind == "kubernetes":
        from .kubernetes.vllm_kubernetes import VllmKubernetes

        return {**VllmKubernetes(spec.name, spec, secrets).outputs, **capacity}
    from .docker.vllm_deployment import VllmDeployment

    return {**VllmDeployment(spec, secrets).outputs, **capacity}
