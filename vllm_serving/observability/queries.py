"""Every PromQL expression a stack's observability uses, with where it is used: the dashboard's
panels and variables and the alerts. The scrape config relabels nothing, so it names no metric.

`rules/observability.py` checks each expression's metric names against the stack's release.
"""

from __future__ import annotations

import msgspec

from vllm_serving.observability.alerts import rule_groups
from vllm_serving.observability.dashboard import dashboard, variable_selectors
from vllm_serving.observability.promql import read
from vllm_serving.spec import ServingSpec


class UsedQuery(msgspec.Struct, frozen=True):
    where: str
    """e.g. `dashboard panel 'KV-cache usage'`, `alert VllmServerDown`."""
    expr: str

    @property
    def metrics(self) -> tuple[str, ...]:
        return read(self.expr).metrics


def used_queries(spec: ServingSpec) -> list[UsedQuery]:
    """The dashboard's panel targets and variable selectors, then the alerts' expressions."""
    model = dashboard(spec)
    found = [UsedQuery(f"dashboard panel {panel['title']!r}", target["expr"])
             for panel in model["panels"] for target in panel.get("targets", [])]
    found += [UsedQuery(f"dashboard variable ${name}", selector) for name, selector in variable_selectors(model)]
    found += [UsedQuery(f"alert {rule['alert']}", rule["expr"])
              for group in rule_groups(spec)["groups"] for rule in group["rules"]]
    return found
