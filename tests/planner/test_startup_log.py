"""`calibrate` reads a vision-language start's encoder line as the corpus states it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.planner.test_available_memory_corpus import load_cases
from vllm_serving.planner.startup_log import parse_startup_log


@pytest.mark.parametrize("case", load_cases(), ids=lambda case: case["id"])
def test_the_encoder_line_gives_the_logged_dummy_batch(case: dict[str, Any]) -> None:
    """Every corpus log that prints "Encoder cache will be initialized with a budget of N tokens,
    and profiled with K <modality> items" (v1/worker/gpu_model_runner.py profile_run) parses to
    the budget, count and modality the case records; a text model's log to none."""
    found = parse_startup_log(case["log_lines"])
    logged = case["logged"]
    assert (found.encoder_budget, found.encoder_items, found.encoder_modality) == (
        logged.get("encoder_budget"), logged.get("encoder_items"), logged.get("encoder_modality"))


def test_only_the_first_encoder_line_counts() -> None:
    """Every TP worker prints the line: the first one read is kept."""
    line = ("(Worker_TP{rank} pid=1) INFO [gpu_model_runner.py:5753] Encoder cache will be initialized with a budget "
            "of {budget} tokens, and profiled with {items} video items of the maximum feature size.")
    found = parse_startup_log("\n".join([line.format(rank=0, budget=153600, items=1),
                                         line.format(rank=1, budget=16384, items=2)]))
    assert (found.encoder_budget, found.encoder_items, found.encoder_modality) == (153_600, 1, "video")
