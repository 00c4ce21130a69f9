"""The error band the plan shows and judges by is what the corpus measures (no hand-written
band), and a release with few logs is judged at the widest band seen."""

from __future__ import annotations

import pytest

from tests.planner.test_available_memory_corpus import predicted_rows
from vllm_serving.planner import error_band
from vllm_serving.planner.error_band import ALL, MIN_CASES, _bands, band_for, compute_bands


def test_the_shipped_band_is_the_corpus_band() -> None:
    """After a change to the estimate or the corpus: `uv run --frozen python tools/error_band/write.py`."""
    errors = [(str(case["vllm_version"]), error) for case, _, error in predicted_rows() if case["scope"] == "in"]
    assert _bands() == compute_bands(errors)


def test_a_release_with_few_logs_is_judged_at_the_widest_optimism_seen() -> None:
    widest = _bands()[ALL]["most_optimistic"]
    thin = [name for name, band in _bands().items() if name != ALL and band["cases"] < MIN_CASES]
    assert thin, "the corpus has releases with few logs"
    for name in thin:
        assert band_for(f"{name}.0").judged_optimistic >= widest


def test_a_release_without_logs_says_so_and_takes_every_release_band() -> None:
    band = band_for("0.31.0")
    assert band.cases == 0 and "no log of v0.31" in band.words()
    assert band.judged_optimistic == _bands()[ALL]["most_optimistic"] > 0


def test_the_pessimistic_figure_is_what_the_worst_judged_error_would_leave() -> None:
    band = band_for("0.19.1")
    assert band.pessimistic(50.0) * (1 + band.judged_optimistic) == 50.0 * 1.0
    assert band.pessimistic(-1.0) == -1.0  # no memory stays no memory


def test_a_release_backed_by_min_cases_logs_is_judged_by_its_own_band(monkeypatch: pytest.MonkeyPatch) -> None:
    """The band file grows with the corpus: a release is judged by its own band from MIN_CASES logs
    on (the module's contract), below that by the widest optimism of all releases."""
    def bands(cases: int) -> dict[str, dict[str, float]]:
        own = {"cases": cases, "most_optimistic": 0.001, "most_pessimistic": -0.002, "median_abs": 0.001}
        every = {"cases": 60, "most_optimistic": 0.02, "most_pessimistic": -0.03, "median_abs": 0.004}
        return {"0.40": own, ALL: every}

    # docs/memory-accounting.md: a release with fewer than five logs is judged at every release's band
    monkeypatch.setattr(error_band, "_bands", lambda: bands(5))
    assert band_for("0.40.1").judged_optimistic == 0.001
    monkeypatch.setattr(error_band, "_bands", lambda: bands(4))
    assert band_for("0.40.1").judged_optimistic == 0.02


@pytest.mark.parametrize(("cases", "logs"), [(1, "1 log"), (2, "2 logs")])
def test_the_band_counts_its_logs_in_words(cases: int, logs: str) -> None:
    band = error_band.ErrorBand(releases="0.19", cases=cases, most_optimistic=0.02, most_pessimistic=-0.01,
                                median_abs=0.01, judged_optimistic=0.02)
    assert band.words() == f"v0.19: -1.0% to +2.0% over {logs}"
