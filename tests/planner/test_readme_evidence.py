"""The README's capacity table says what the corpus shows: per minor release, the logs, the
error band and the median (vllm_serving/planner/error_band.json, itself checked against the
corpus by test_error_band.py)."""

from __future__ import annotations

import re

from tests.paths import ROOT
from vllm_serving.planner.error_band import _bands

ROW = re.compile(r"^\| (v[\d.]+|all) \| (\d+) \| ([+-][\d.]+)% to ([+-][\d.]+)% \| ([\d.]+)% \|$")


def test_readme_table_matches_the_error_band() -> None:
    rows = [ROW.match(line) for line in (ROOT / "README.md").read_text().splitlines()]
    table = {m[1].removeprefix("v"): (int(m[2]), float(m[3]), float(m[4]), float(m[5])) for m in rows if m}
    assert set(table) == set(_bands()), "one README row per release with logs, and one for all"
    for name, band in _bands().items():
        cases, low, high, median = table[name]
        assert cases == band["cases"]
        assert abs(low - band["most_pessimistic"] * 100) < 0.006 and abs(high - band["most_optimistic"] * 100) < 0.006
        assert abs(median - band["median_abs"] * 100) < 0.006, name
