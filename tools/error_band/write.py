"""Write vllm_serving/planner/error_band.json from the start-up log corpus.

Run after a change to the estimate or the corpus: `uv run --frozen python tools/error_band/write.py`.
tests/planner/test_error_band.py fails until the shipped band matches the corpus.
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


def main() -> None:
    errors = [(str(case["vllm_version"]), error) for case, _, error in predicted_rows() if case["scope"] == "in"]
    doc = {"_about": "(estimate - logged) / logged of the in-scope cases of tests/fixtures/startup_logs, per minor "
                     "release and for all; written by tools/error_band/write.py",
           "bands": compute_bands(errors)}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(errors)} cases")


if __name__ == "__main__":
    main()
