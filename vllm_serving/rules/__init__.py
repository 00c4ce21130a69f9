"""Compatibility rules: hardware, model and engine facts checked before anything is deployed.

The rules are data (`RULES`, one `Rule` per code, grouped by topic in the modules below);
`check` runs them all, then applies the stack's waivers (`waivers.py`). docs/rules.md is one row
per entry, kept in sync by a test.
"""

from __future__ import annotations

from vllm_serving.findings import ConfigError, Finding, Severity
from vllm_serving.fleet import fleet_hosts
from vllm_serving.release.promotion import promotion_findings
from vllm_serving.rules import (
    attention,
    capacity_rules,
    container,
    cpu_target,
    engine_flags,
    exposure,
    extra_args,
    flag_values,
    fleet,
    host_paths,
    host_resources,
    image,
    model_sizing,
    multi_node,
    observability,
    parallelism,
    precision,
    quantization,
    quantized_layers,
    scheduler,
    speculative,
    ssh_link,
    stack_consistency,
)
from vllm_serving.rules.base import Context, Rule
from vllm_serving.rules.waivers import code_guards, waive
from vllm_serving.spec import ServingSpec

RULES: tuple[Rule, ...] = (
    *precision.RULES,
    *attention.RULES,
    *quantization.RULES,
    *quantized_layers.RULES,
    *parallelism.RULES,
    *multi_node.RULES,
    *fleet.RULES,
    *model_sizing.RULES,
    *capacity_rules.RULES,
    *scheduler.RULES,
    *speculative.RULES,
    *engine_flags.RULES,
    *image.RULES,
    *container.RULES,
    *host_resources.RULES,
    *exposure.RULES,
    *ssh_link.RULES,
    *observability.RULES,
    *host_paths.RULES,
    *stack_consistency.RULES,
    *extra_args.RULES,
    *flag_values.RULES,
    *cpu_target.RULES,
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
assert len(RULES_BY_CODE) == len(RULES), "rule codes must be unique"
GUARDS = code_guards(RULES)
"""Every code a finding can carry -> what it guards that no waiver may pass (None: waivable)."""

__all__ = ["RULES", "RULES_BY_CODE", "Rule", "check"]


def check(spec: ServingSpec) -> list[Finding]:
    """Every finding for `spec`: errors first, then warnings, each in the table's order; a Docker
    fleet's host list first, then each host's own (rules/fleet.py). The stack's waivers then mark
    what they set aside (listed last) and add an error for each waiver that cannot stand."""
    hosts = fleet_hosts(spec)
    findings = fleet.check_fleet(spec, hosts, _check_server) if hosts else _check_server(spec)
    return waive(findings, spec.settings.waivers, GUARDS)


def _check_server(spec: ServingSpec) -> list[Finding]:
    """Every finding for one server's spec."""
    ctx = Context(spec)
    findings = [f for rule in cpu_target.applicable(RULES, ctx) for f in rule.run(ctx)]
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
    # loaded here: checking a Docker stack never needs the Kubernetes renderer (benchmarks/startup.py)
    from vllm_serving.render.kubernetes.objects import kubernetes_objects  # noqa: PLC0415

    try:
        kubernetes_objects(spec)
    except ConfigError as exc:
        return list(exc.findings)
    return []
