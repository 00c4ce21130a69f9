"""The Pulumi program: read the stack config, refuse what cannot work, build the backend.

Nothing is registered until the settings, the catalogs and the compatibility rules agree, so a
bad config fails `pulumi preview` with the key and the fix and leaves no half deployment.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pulumi
from pulumi.runtime import config as runtime_config

from vllm_serving.findings import PROJECT, ConfigError, Finding, Severity
from vllm_serving.fleet import fleet_hosts
from vllm_serving.planner.capacity import plan_capacity
from vllm_serving.release.carried import release_of, with_digest
from vllm_serving.release.promotion import Promotion, promote_from, target_kind
from vllm_serving.rules import check
from vllm_serving.rules.every_error import every_finding, stack_build
from vllm_serving.rules.exposure import api_key_findings
from vllm_serving.settings import SECRET_KEYS
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import ServingSpec, promoted_spec, resolve
from vllm_serving.stack_files.loader import project_defaults
from vllm_serving.stack_files.namespaces import namespace_findings

# Pulumi.yaml's directory: its project-level config decides which values a promotion replaces.
PROJECT_DIR = Path(__file__).resolve().parent.parent


def _raw_config() -> tuple[dict[str, Any], set[str]]:
    """Every `vllm-serving:*` key the engine passed, JSON objects decoded, plus the secret keys."""
    merged = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    misspelt = namespace_findings(merged)  # a key Pulumi would hand to no program
    if misspelt:
        raise ConfigError(misspelt)
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
        return msgspec.structs.replace(finding, severity=Severity.ERROR)
    return finding


def enforce(spec: ServingSpec) -> ServingSpec:
    """Run the rules: an error no waiver sets aside stops the program; warnings and waived findings
    (with the waiver's reason) go to Pulumi's log as warnings, so `pulumi preview` prints them in
    its diagnostics (and the PR comment the preview workflow posts carries them)."""
    findings = [_deploy_severity(f) for f in check(spec)] + _secret_value_findings(spec)
    errors = [f for f in findings if f.blocks]
    for shown in (f for f in findings if not f.blocks):
        pulumi.log.warn(shown.line())
    if errors:
        raise ConfigError(errors)
    return spec


def _secret_value_findings(spec: ServingSpec) -> list[Finding]:
    """What is wrong with the apiKey's value, checked where the program resolves the secrets
    (offline the value stays encrypted), before any resource; no finding repeats the value."""
    if "apiKey" not in spec.settings.secrets_set:
        return []
    return api_key_findings(str(runtime_config.get_config(f"{PROJECT}:apiKey") or ""))


def _secrets(spec: ServingSpec) -> dict[str, pulumi.Output[str]]:
    config = pulumi.Config(PROJECT)
    found = {key: config.get_secret(key) for key in SECRET_KEYS if key in spec.settings.secrets_set}
    return {key: value for key, value in found.items() if value is not None}


FLEET = "docker-fleet"
# What each backend exports, known before a promoted release resolves (a test keeps it exact).
EXPORTS: dict[str, tuple[str, ...]] = {
    "docker": ("baseUrl", "healthUrl", "modelsUrl", "metricsUrl", "servedModelName", "imageDigest",
               "vllmArgs", "dockerRunCommand", "containerName", "logsCommand", "capacity", "release"),
    "kubernetes": ("baseUrl", "healthUrl", "modelsUrl", "metricsUrl", "servedModelName", "vllmArgs",
                   "namespace", "serviceName", "scaleOut", "capacity", "release"),
    # a Docker fleet (target.hosts): per host under `hosts`, every baseUrl in `endpoints`
    FLEET: ("servedModelName", "imageDigest", "vllmArgs", "hosts", "endpoints", "capacity", "release"),
}


def deploy(spec: ServingSpec) -> dict[str, Any]:
    """The backend's resources for a checked spec, and the values to export.

    The backend's Pulumi package is imported only when the stack uses it.
    """
    secrets = _secrets(spec)
    if spec.settings.target.kind == "kubernetes":
        from components.kubernetes.vllm_kubernetes import VllmKubernetes

        outputs = dict(VllmKubernetes(spec.name, spec, secrets).outputs)
    elif hosts := fleet_hosts(spec):
        from components.docker.fleet import VllmFleet

        outputs = dict(VllmFleet(spec, hosts, secrets).outputs)
    else:
        from components.docker.vllm_deployment import VllmDeployment

        outputs = dict(VllmDeployment(spec, secrets).outputs)
    release = release_of(spec.settings, spec.stack)
    digest = outputs.get("imageDigest")
    outputs["release"] = (pulumi.Output.from_input(digest).apply(lambda d: with_digest(release, d))
                          if digest is not None else release)
    outputs["capacity"] = plan_capacity(spec).as_dict()
    return outputs


def _promoted(values: dict[str, Any], secret_keys: set[str], source: str, release: Any) -> pulumi.Output[Any]:
    promotion = Promotion(source, pulumi.get_stack(), release)
    try:
        spec = enforce(promoted_spec(values, secret_keys, promotion, project_defaults(PROJECT_DIR), PROJECT_DIR))
    except ConfigError as exc:
        raise pulumi.RunError(str(exc)) from None
    return pulumi.Output.all(**deploy(spec))


def build() -> dict[str, Any]:
    """Build the deployment for the current stack and return the values to export.

    A promoting stack reads the source's `release` output through a StackReference first; the
    rules then run on the joined settings, before any of its resources is registered.
    """
    try:
        values, secret_keys = _raw_config()
        source = promote_from(values, pulumi.get_stack())
        if source is None:
            stack = pulumi.get_stack()
            try:
                spec = resolve(parse_stack_config(values, secret_keys), stack, project_dir=PROJECT_DIR)
            except ConfigError:
                # every error of the stack in one run, as `vllm-stack check` reports them
                build_stack = stack_build(secret_keys, stack, PROJECT_DIR)
                found = [_deploy_severity(f) for f in every_finding(values, build_stack)]
                raise ConfigError([f for f in found if f.blocks]) from None
            return deploy(enforce(spec))
        kind = target_kind(values)
        if kind == "docker" and (values.get(f"{PROJECT}:target") or {}).get("hosts"):
            kind = FLEET
    except ConfigError as exc:
        # RunError prints the message alone: the operator needs the keys, not a traceback
        raise pulumi.RunError(str(exc)) from None
    reference = pulumi.StackReference(source)
    deployed = reference.get_output("release").apply(
        lambda release: _promoted(values, secret_keys, source, release))
    return {name: deployed.apply(_pick(name)) for name in EXPORTS[kind]}


def _pick(name: str) -> Callable[[Any], Any]:
    return lambda outputs: outputs[name]
