"""The estimate against real start-up logs (tests/fixtures/startup_logs, one YAML per case).

Each in-scope case is predicted with its release's accounting, from the inputs the log or its
thread states (the logged "Model loading took" stands in for the weights), and must land within
3% of the "Available KV cache memory" vLLM logged; the median error within 1.5%. Out-of-scope
cases (hybrid models, encoder-bound multimodal runs, shared GPUs, dev builds) are predicted and
shown but do not gate; skipped cases lack an input (named in the file) and are not predicted.

The KV sizing is checked on its own: given the memory vLLM logged, the planner's layout must
give the "GPU KV cache size" tokens and the "Maximum concurrency" vLLM logged, within 2%, for
every case that logs them. `pytest -s` prints both tables.
"""

from __future__ import annotations

import statistics
from typing import Any

import pytest
import yaml

from tests.paths import FIXTURES
from vllm_serving.catalog.models import MODELS, ModelArchitecture
from vllm_serving.planner.available_memory import GIB, MemoryEstimate, estimate_available_memory, resolve_release
from vllm_serving.planner.capacity import vllm_logged_tokens
from vllm_serving.planner.kv_sizing import KvLayout, default_prefix_caching, kv_layout
from vllm_serving.planner.startup_case import case_inputs

CORPUS = FIXTURES / "startup_logs"
MAX_ERROR = 0.03
MAX_MEDIAN_ERROR = 0.015
MAX_OPTIMISTIC_ERROR = 0.02
"""Estimating more KV memory than vLLM finds is the dangerous side: held to 2%."""
MAX_KV_SIZING_ERROR = 0.02
def load_cases() -> list[dict[str, Any]]:
    return [yaml.safe_load(path.read_text()) | {"file": path.name} for path in sorted(CORPUS.glob("*.yaml"))]


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


def case_architecture(model: dict[str, Any], max_model_len: int) -> ModelArchitecture:
    """The catalog entry the case names, else an attention-only model from its inline shape
    (the KV layout reads neither model_type nor family: the architecture stands in)."""
    if "catalog" in model:
        return MODELS[model["catalog"]]
    return ModelArchitecture(
        architecture=model["architecture"], model_type=model["architecture"], family=model["architecture"],
        params_billion=float(model["params_billion"]), num_hidden_layers=int(model["num_layers"]),
        hidden_size=int(model["hidden_size"]), vocab_size=int(model["vocab_size"]),
        max_position_embeddings=max_model_len, num_attention_heads=int(model["num_attention_heads"]),
        num_key_value_heads=int(model["num_key_value_heads"]), head_dim=int(model["head_dim"]),
        full_attention_layers=int(model["num_layers"]),
    )


def case_layout(case: dict[str, Any]) -> KvLayout:
    """The planner's layout of one GPU's KV cache for the case's model and flags."""
    engine, model = case["engine"], case["model"]
    architecture = case_architecture(model, int(engine["max_model_len"]))
    return kv_layout(
        architecture, tp=int(engine["tp"]), pp=int(engine["pp"]), compute_bytes=int(model["dtype_bytes"]),
        kv_bytes=int(engine.get("kv_cache_dtype_bytes", model["dtype_bytes"])),
        max_model_len=int(engine["max_model_len"]),
        prefix_caching=engine.get("enable_prefix_caching", default_prefix_caching(architecture)),
        max_num_batched_tokens=int(engine["max_num_batched_tokens"] or 0),
    )


def kv_sizing_rows() -> list[tuple[dict[str, Any], int, int, float | None, float | None]]:
    """(case, planner tokens, logged tokens, planner concurrency, logged concurrency) for every
    case that logs "GPU KV cache size", from the memory it logged."""
    rows = []
    for case in load_cases():
        logged = case["logged"]
        if logged.get("kv_tokens") is None:
            continue
        layout = case_layout(case)
        num_blocks = layout.num_blocks(int(float(logged["available_kv_gib"]) * GIB))
        logged_concurrency = logged.get("max_concurrency")
        concurrency = layout.max_concurrency(num_blocks) if logged_concurrency is not None else None
        release = resolve_release(str(case["vllm_version"]))[0].name
        tokens = vllm_logged_tokens(release, layout, num_blocks, layout.max_concurrency(num_blocks),
                                    int(case["engine"]["max_model_len"]))
        rows.append((case, tokens, int(logged["kv_tokens"]),
                     concurrency, logged_concurrency))
    return rows


def kv_sizing_table(rows: list[tuple[dict[str, Any], int, int, float | None, float | None]]) -> str:
    lines = [f"{'case':46} {'tokens':>10} {'logged':>10} {'error':>7} {'concurrency':>11} {'logged':>8}"]
    for case, tokens, logged_tokens, concurrency, logged_concurrency in rows:
        shown = f"{concurrency:11.2f} {logged_concurrency:8.2f}" if concurrency is not None else ""
        lines.append(f"{case['id']:46} {tokens:10,} {logged_tokens:10,} "
                     f"{(tokens - logged_tokens) / logged_tokens:+7.2%} {shown}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def rows() -> list[tuple[dict[str, Any], MemoryEstimate, float]]:
    table_rows = predicted_rows()
    print("\n" + error_table(table_rows))
    return table_rows


@pytest.fixture(scope="module")
def sizing_rows() -> list[tuple[dict[str, Any], int, int, float | None, float | None]]:
    table_rows = kv_sizing_rows()
    print("\n" + kv_sizing_table(table_rows))
    return table_rows


def test_every_in_scope_case_is_within_three_percent(rows: list[tuple[dict[str, Any], MemoryEstimate, float]]) -> None:
    failing = [case["id"] for case, _, error in rows if case["scope"] == "in" and abs(error) > MAX_ERROR]
    assert not failing, f"{failing} off by more than {MAX_ERROR:.0%}:\n{error_table(rows)}"


def test_median_in_scope_error_is_within_one_and_a_half_percent(
    rows: list[tuple[dict[str, Any], MemoryEstimate, float]],
) -> None:
    median = statistics.median(abs(error) for case, _, error in rows if case["scope"] == "in")
    assert median <= MAX_MEDIAN_ERROR, f"median error {median:.2%}:\n{error_table(rows)}"


def test_no_in_scope_case_is_optimistic_by_more_than_two_percent(
    rows: list[tuple[dict[str, Any], MemoryEstimate, float]],
) -> None:
    optimistic = [case["id"] for case, _, error in rows if case["scope"] == "in" and error > MAX_OPTIMISTIC_ERROR]
    assert not optimistic, f"{optimistic} promise more than vLLM found:\n{error_table(rows)}"


def test_each_case_uses_the_accounting_of_its_own_release(
    rows: list[tuple[dict[str, Any], MemoryEstimate, float]],
) -> None:
    """A gating case must be predicted with the accounting read from its own minor release."""
    def minor(version: str) -> list[str]:
        return version.split(".")[:2]

    other = [case["id"] for case, estimate, _ in rows
             if case["scope"] == "in" and minor(estimate.release) != minor(str(case["vllm_version"]))]
    assert not other


def test_kv_sizing_gives_the_logged_tokens_and_concurrency_from_the_logged_memory(
    sizing_rows: list[tuple[dict[str, Any], int, int, float | None, float | None]],
) -> None:
    """The block layout alone, isolated from the memory estimate: the logged memory divided as
    the planner divides it gives vLLM's token figure and concurrency within 2%."""
    def off_by(found: float | None, logged: float | None) -> bool:
        return found is not None and logged is not None and abs(found - logged) > MAX_KV_SIZING_ERROR * logged

    off = [case["id"] for case, tokens, logged, concurrency, logged_concurrency in sizing_rows
           if off_by(tokens, logged) or off_by(concurrency, logged_concurrency)]
    assert not off, f"{off} off by more than {MAX_KV_SIZING_ERROR:.0%}:\n{kv_sizing_table(sizing_rows)}"


def test_corpus_spans_releases_parallelism_and_model_kinds() -> None:
    cases = load_cases()
    gating = [case for case in cases if case["scope"] == "in"]
    assert len(gating) >= 45, "at least 45 public logs gate"
    assert len({".".join(str(case["vllm_version"]).split(".")[:2]) for case in gating}) >= 8, "over 8 releases"
    assert any(str(case["vllm_version"]).startswith("0.20") for case in gating), "a v0.20 release gates"
    assert any(case["engine"]["tp"] > 1 for case in gating), "tensor parallelism gates"
    assert any(case["engine"]["enforce_eager"] for case in gating), "an eager start gates"
    assert any("experts_per_token" in case["model"] for case in gating), "a mixture of experts gates"
    assert any("linear_attention_layers" in case["model"] for case in cases), "a hybrid model is shown"


@pytest.mark.parametrize("case", load_cases(), ids=lambda case: case["id"])
def test_case_states_its_source_and_the_lines_used(case: dict[str, Any]) -> None:
    assert str(case["source_url"]).startswith("https://")
    assert "Available KV cache memory" in case["log_lines"] or case["scope"] == "skipped" or (
        f"{case['logged']['available_kv_gib']}" in case["log_lines"]
    )
    assert str(case["logged"]["weights_gib"]).rstrip("0") in case["log_lines"]
    if case["scope"] != "skipped":
        assert case["gpu"]["total_evidence"], "a predicted case names where its GPU memory comes from"
    if case["logged"].get("kv_tokens") is not None:
        assert f"{case['logged']['kv_tokens']:,}" in case["log_lines"], "the token figure is quoted"
