"""Write vllm_serving/planner/error_band.json from the start-up log corpus, and the README's table.

Run after a change to the estimate or the corpus: `uv run --frozen python tools/error_band/write.py`.
tests/planner/test_error_band.py and test_readme_evidence.py fail until both match the corpus.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.planner.test_available_memory_corpus import predicted_rows  # noqa: E402
from vllm_serving.planner.error_band import compute_bands  # noqa: E402

OUT = ROOT / "vllm_serving" / "planner" / "error_band.json"
README = ROOT / "README.md"
TABLE_HEAD = "| vLLM release | logs | band | median |\n|---|---|---|---|\n"


def _row(name: str, band: dict[str, float]) -> str:
    return (f"| {name} | {band['cases']:.0f} | {band['most_pessimistic'] * 100:+.2f}% to "
            f"{band['most_optimistic'] * 100:+.2f}% | {band['median_abs'] * 100:.2f}% |")


def readme_table(bands: dict[str, dict[str, float]]) -> str:
    releases = sorted((name for name in bands if name != "all"), key=lambda v: tuple(map(int, v.split("."))))
    return "\n".join([*(_row(f"v{name}", bands[name]) for name in releases), _row("all", bands["all"])])


def main() -> None:
    errors = [(str(case["vllm_version"]), error) for case, _, error in predicted_rows() if case["scope"] == "in"]
    doc = {"_about": "(estimate - logged) / logged of the in-scope cases of tests/fixtures/startup_logs, per minor "
                     "release and for all; written by tools/error_band/write.py",
           "bands": compute_bands(errors)}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    text = README.read_text()
    start = text.index(TABLE_HEAD) + len(TABLE_HEAD)
    end = text.index("\n\n", start)
    README.write_text(text[:start] + readme_table(doc["bands"]) + text[end:])
    print(f"wrote {OUT.relative_to(ROOT)} and the README's table: {len(errors)} cases")


if __name__ == "__main__":
    main()
