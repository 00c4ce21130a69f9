"""Compatibility rules: hardware, model and engine facts checked before anything is deployed.

The rules are data (`RULES`, one `Rule` per code, grouped by topic in the modules below);
`check` runs them all. docs/rules.md is one row per entry, kept in sync by a test.
"""

from __future__ import annotations

from vllm_serving.findings import ConfigError, Finding, Severity
from vllm_serving.release.promotion import promotion_findings
from vllm_serving.render.kubernetes.objects import kubernetes_objects
from vllm_serving.rules import (
    capacity_rules,
    container,
    engine_flags,
    extra_args,
    image,
    parallelism,
    precision,
    quantization,
    scheduler,
    speculative,
)
from vllm_serving.rules.base import Context, Rule
from vllm_serving.spec import ServingSpec

RULES: tuple[Rule, ...] = (
    *precision.RULES,
    *quantization.RULES,
    *parallelism.RULES,
    *capacity_rules.RULES,
    *scheduler.RULES,
    *speculative.RULES,
    *engine_flags.RULES,
    *image.RULES,
    *container.RULES,
    *extra_args.RULES,
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
assert len(RULES_BY_CODE) == len(RULES), "rule codes must be unique"

__all__ = ["RULES", "RULES_BY_CODE", "Rule", "check"]


def check(spec: ServingSpec) -> list[Finding]:
    """Every finding for `spec`: errors first, then warnings, each in the table's order."""
    ctx = Context(spec)
    findings = [f for rule in RULES for f in rule.run(ctx)]
    findings += _backend_objects(spec)
    if spec.promotion is not None:
        findings = [spec.promotion.attribute(f) for f in findings]
        findings += promotion_findings(spec.settings, spec.promotion)
    return sorted(findings, key=lambda f: f.severity != Severity.ERROR)  # stable sort


def _backend_objects(spec: ServingSpec) -> list[Finding]:
    """Render the backend's objects once, so what only the cluster would reject (a Docker-valid
    name that is not a DNS-1123 label, a claim that cannot be shared) is found here, before any
    resource is registered, rather than while the component builds them."""
    if spec.settings.target.kind != "kubernetes":
        return []
    try:
        kubernetes_objects(spec)
    except ConfigError as exc:
        return list(exc.findings)
    return []
