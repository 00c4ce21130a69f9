"""The estimate against real start-up logs (tests/fixtures/startup_logs, one YAML per case).

Each in-scope case is predicted with its release's accounting, from the inputs the log or its
thread states (the logged "Model loading took" stands in for the weights), and must land within
3% of the "Available KV cache memory" vLLM logged; the median error within 1.5%. Out-of-scope
cases (MoE, multi-node, dev builds) are predicted and shown but do not gate; skipped cases lack
an input (named in the file). `pytest -s` prints the table.
"""

from __future__ import annotations

import statistics
from typing import Any

import pytest
import yaml

from tests.paths import FIXTURES
from vllm_serving.planner.available_memory import (
    MemoryEstimate,
    MemoryInputs,
    ModelShape,
    estimate_available_memory,
)

CORPUS = FIXTURES / "startup_logs"
MAX_ERROR = 0.03
MAX_MEDIAN_ERROR = 0.015
SHAPE_KEYS = ("hidden_size", "intermediate_size", "vocab_size", "num_layers",
              "num_attention_heads", "num_key_value_heads", "head_dim", "dtype_bytes")


def load_cases() -> list[dict[str, Any]]:
    return [yaml.safe_load(path.read_text()) | {"file": path.name} for path in sorted(CORPUS.glob("*.yaml"))]


def case_inputs(case: dict[str, Any]) -> MemoryInputs:
    engine, gpu, model = case["engine"], case["gpu"], case["model"]
    return MemoryInputs(
        vllm_version=str(case["vllm_version"]),
        gpu_total_gib=float(gpu["total_gib"]),
        gpu_name=str(gpu["name"]),
        weights_gib=float(case["logged"]["weights_gib"]),
        model=ModelShape(**{key: int(model[key]) for key in SHAPE_KEYS}),
        gpu_memory_utilization=engine["gpu_memory_utilization"],
        tp=int(engine["tp"]),
        max_num_batched_tokens=engine["max_num_batched_tokens"],
        max_num_seqs=engine["max_num_seqs"],
        usage_context=engine["usage_context"],
        enforce_eager=bool(engine["enforce_eager"]),
        sampler=engine["sampler"],
    )


def predicted_rows() -> list[tuple[dict[str, Any], MemoryEstimate, float]]:
    rows = []
    for case in load_cases():
        if case["scope"] == "skipped":
            continue
        estimate = estimate_available_memory(case_inputs(case))
        logged = float(case["logged"]["available_kv_gib"])
        rows.append((case, estimate, (estimate.available_kv_gib - logged) / logged))
    return rows


def error_table(rows: list[tuple[dict[str, Any], MemoryEstimate, float]]) -> str:
    lines = [f"{'case':46} {'vLLM':10} {'scope':5} {'logged':>7} {'estimate':>8} {'error':>7}"]
    for case, estimate, error in rows:
        lines.append(
            f"{case['id']:46} {str(case['vllm_version'])[:10]:10} {case['scope']:5} "
            f"{case['logged']['available_kv_gib']:7.2f} {estimate.available_kv_gib:8.2f} {error:+7.2%}"
        )
    skipped = [case["id"] for case in load_cases() if case["scope"] == "skipped"]
    lines.append(f"skipped (an input is not stated): {', '.join(skipped) or 'none'}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def rows() -> list[tuple[dict[str, Any], MemoryEstimate, float]]:
    table_rows = predicted_rows()
    print("\n" + error_table(table_rows))
    return table_rows


def test_every_in_scope_case_is_within_three_percent(rows: list[tuple[dict[str, Any], MemoryEstimate, float]]) -> None:
    failing = [case["id"] for case, _, error in rows if case["scope"] == "in" and abs(error) > MAX_ERROR]
    assert not failing, f"{failing} off by more than {MAX_ERROR:.0%}:\n{error_table(rows)}"


def test_median_in_scope_error_is_within_one_and_a_half_percent(
    rows: list[tuple[dict[str, Any], MemoryEstimate, float]],
) -> None:
    median = statistics.median(abs(error) for case, _, error in rows if case["scope"] == "in")
    assert median <= MAX_MEDIAN_ERROR, f"median error {median:.2%}:\n{error_table(rows)}"


def test_each_case_uses_the_accounting_of_its_own_release(
    rows: list[tuple[dict[str, Any], MemoryEstimate, float]],
) -> None:
    """A gating case must be predicted with the accounting read from its exact release."""
    inexact = [case["id"] for case, estimate, _ in rows if case["scope"] == "in" and not estimate.exact_release]
    assert not inexact


def test_corpus_spans_twelve_cases_and_four_releases() -> None:
    cases = load_cases()
    gating = [case for case in cases if case["scope"] == "in"]
    assert len(cases) >= 12
    assert len({case["vllm_version"] for case in gating}) >= 4


@pytest.mark.parametrize("case", load_cases(), ids=lambda case: case["id"])
def test_case_states_its_source_and_the_lines_used(case: dict[str, Any]) -> None:
    assert str(case["source_url"]).startswith("https://")
    assert "Available KV cache memory" in case["log_lines"] or case["scope"] == "skipped" or (
        f"{case['logged']['available_kv_gib']}" in case["log_lines"]
    )
    assert str(case["logged"]["weights_gib"]).rstrip("0") in case["log_lines"]
    if case["scope"] != "skipped":
        assert case["gpu"]["total_evidence"], "a predicted case names where its GPU memory comes from"
