"""The rule table as a whole: every rule has boundary cases in the test module named after its
module, rows cite their source, the shipped stacks' findings, ordering and the invalid stack files."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.stack_builders import edit, shipped_settings, spec_of
from vllm_serving import rules
from vllm_serving.findings import Severity
from vllm_serving.stack_files.loader import load_settings, read_stack_file

MODULES = ("precision", "attention", "quantization", "parallelism", "capacity_rules", "scheduler", "speculative",
           "engine_flags", "image", "container", "host_resources", "extra_args", "flag_values", "cpu_target",
           "multi_node", "exposure",
           "host_paths", "stack_consistency", "model_sizing", "fleet", "quantized_layers")
# Where a rule's fact comes from: vLLM's source (under vllm/ of the wheel), this project's files,
# or a vLLM issue; never a document outside the repository.
CITATION = re.compile(r"(^|[ (;])(vllm/[\w/.]+\.(py|so)|vllm_serving/|tests/|this project|vllm#\d+)")


@pytest.mark.parametrize("module", MODULES)
def test_each_rule_has_boundary_cases_in_its_test_module(module: str) -> None:
    rules_module = importlib.import_module(f"vllm_serving.rules.{module}")
    tests_module = importlib.import_module(f"tests.rules.test_{module}")
    codes = {rule.code for rule in rules_module.RULES}
    covered = {case.code for case in tests_module.BOUNDARIES}
    assert covered == codes


def test_every_rule_is_tested_here() -> None:
    """Rules of modules other than MODULES (added alongside) are at least named by a test here."""
    mine = {rule.code for m in MODULES for rule in importlib.import_module(f"vllm_serving.rules.{m}").RULES}
    assert mine <= set(rules.RULES_BY_CODE)
    tests_text = "".join(p.read_text(encoding="utf-8") for p in Path(__file__).parent.glob("test_*.py"))
    assert [code for code in rules.RULES_BY_CODE if code not in mine and f'"{code}"' not in tests_text] == []


def test_codes_keys_and_sources() -> None:
    for rule in rules.RULES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.code)
        assert rule.key.startswith("vllm-serving:")
        assert rule.what and rule.why
        assert CITATION.search(rule.source), f"{rule.code} cites no source: {rule.source}"
        assert "vllm-facts" not in rule.source


@pytest.mark.parametrize(("stack", "warnings"), [
    ("v100", ["hybrid-triton-below-cc80", "registry-password-missing", "api-open-on-network"]),
    ("a100", ["fp8-weights-weight-only", "speculative-tokens-many", "api-open-on-network"]),
    ("a100-k8s", ["fp8-weights-weight-only", "speculative-tokens-many"]),
])
def test_shipped_stacks_have_no_errors(stack: str, warnings: list[str]) -> None:
    findings = rules.check(spec_of(shipped_settings(stack)))
    assert [f.code for f in findings if f.severity == Severity.ERROR] == []
    assert [f.code for f in findings] == warnings


def test_errors_first_and_deterministic() -> None:
    settings = edit(shipped_settings("v100"), engine={"dtype": None, "kv_cache_dtype": "fp8"},
                    container={"privileged": True})
    first = rules.check(spec_of(settings))
    severities = [f.severity for f in first]
    assert severities == sorted(severities, key=lambda s: s != Severity.ERROR)
    assert severities[0] == Severity.ERROR and Severity.WARNING in severities
    assert first == rules.check(spec_of(settings))


def test_kubernetes_objects_are_checked_with_the_rules() -> None:
    """A container name Docker takes but a Kubernetes Service cannot is found by `check`."""
    def codes(stack: str) -> set[str]:
        return {f.code for f in rules.check(spec_of(edit(shipped_settings(stack), container={"name": "vllm_a"})))}

    assert "k8s-name" in codes("a100-k8s") and "k8s-name" not in codes("a100")


@pytest.mark.parametrize(("name", "code"), [
    ("v100-bf16", "dtype-bf16-unsupported"),
    ("v100-fp8-kv", "fp8-kv-cache-unsupported"),
    ("tp3", "tp-kv-heads-indivisible"),
    ("weights-dont-fit", "weights-exceed-budget"),
])
def test_invalid_stack_files(name: str, code: str) -> None:
    stack_file = read_stack_file(ROOT / "tests" / "stacks" / "invalid" / f"{name}.yaml")
    findings = rules.check(spec_of(load_settings(stack_file), stack_file.stack))
    errors = [f for f in findings if f.severity == Severity.ERROR]
    assert code in [f.code for f in errors]
    assert all(f.fix for f in errors)
