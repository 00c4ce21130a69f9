"""Stacks with observability on, the vendored prometheus-operator CRDs as validators, promtool."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.paths import FIXTURES
from tests.stack_builders import make_spec
from vllm_serving.spec import ServingSpec

CRDS = FIXTURES / "crds"
SERVICE_MONITOR_CRD = CRDS / "monitoring.coreos.com_servicemonitors.yaml"
PROMETHEUS_RULE_CRD = CRDS / "monitoring.coreos.com_prometheusrules.yaml"
ON = {"prometheusOperator": True, "grafanaDashboard": True}
PROMTOOL = shutil.which("promtool")
REQUIRE_VARIABLE = "VLLM_SERVING_REQUIRE_PROMTOOL"
"""Set by every CI path that installs promtool (.ci/run, the preview workflow): there a missing
promtool fails these tests instead of skipping them, so no CI path quietly runs fewer tests."""
_MISSING = "promtool is not installed (Debian/Ubuntu: apt-get install prometheus)"
SEVERITY = {
    "VllmKvCacheAlmostFull": "warning", "VllmRequestsQueueing": "warning", "VllmPreempting": "warning",
    "VllmTimeToFirstTokenHigh": "warning", "VllmServerDown": "critical", "VllmServerAbsent": "critical",
}
"""Each alert's severity: what pages someone (critical: no server answers), what waits for office hours."""
needs_promtool = pytest.mark.skipif(PROMTOOL is None and os.environ.get(REQUIRE_VARIABLE) != "1", reason=_MISSING)


def observed_spec(stack: str = "a100-k8s", secrets: tuple[str, ...] = (), **sections: Any) -> ServingSpec:
    """A shipped stack with observability on (both switches on Kubernetes), plus `sections`."""
    if stack.endswith("k8s"):
        sections["observability"] = {**ON, **sections.get("observability", {})}
    return make_spec(stack, secrets, **sections)


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None, f"{_MISSING}, and {REQUIRE_VARIABLE}=1 says this CI path installs it"
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False)
