"""docs/capacity.md's evidence table says what the corpus shows: per release, the gating cases, the
largest error and the median (tests/fixtures/startup_logs)."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict

from tests.paths import DOCS
from tests.planner.test_available_memory_corpus import predicted_rows

ROW = re.compile(r"^\| v(\d[\d.]+) \| (\d+) \| ([\d.]+)% \| ([\d.]+)% \|$")


def test_readme_table_matches_the_corpus() -> None:
    errors: dict[str, list[float]] = defaultdict(list)
    for case, _, error in predicted_rows():
        if case["scope"] == "in":
            errors[str(case["vllm_version"])].append(abs(error) * 100)
    rows = [ROW.match(line) for line in (DOCS / "capacity.md").read_text().splitlines()]
    table = {m[1]: (int(m[2]), float(m[3]), float(m[4])) for m in rows if m}
    assert set(table) == set(errors), "one row per release with gating cases"
    for release, found in errors.items():
        cases, largest, median = table[release]
        assert cases == len(found)
        assert abs(largest - max(found)) < 0.01 and abs(median - statistics.median(found)) < 0.01, release
