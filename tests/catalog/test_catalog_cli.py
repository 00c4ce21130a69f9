"""`vllm-stack models` and `gpus` list every catalog entry, with the facts and sources as data."""

from __future__ import annotations

import json

import pytest

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import CATALOG, ModelArchitecture
from vllm_serving.cli import main


def _json(capsys: pytest.CaptureFixture[str], verb: str) -> list[dict[str, object]]:
    assert main([verb, "--json"]) == 0
    rows: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return rows


def test_models_json_lists_every_entry_with_its_source(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys, "models")
    assert [row["name"] for row in rows] == list(CATALOG)
    for row in rows:
        assert row["source"] == CATALOG[str(row["name"])].source


def test_a_listed_entry_pastes_as_an_inline_architecture(capsys: pytest.CaptureFixture[str]) -> None:
    """What `models --json` prints for an entry, minus its names and source, is a valid model.architecture."""
    for row in _json(capsys, "models"):
        facts = {k: v for k, v in row.items()
                 if k not in ("name", "huggingFaceId", "source", "notes", "loggedLoads", "totalWeightsGib")}
        assert ModelArchitecture.model_validate(facts) == CATALOG[str(row["name"])].architecture_facts()


def test_gpus_json_lists_every_card_with_its_label(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys, "gpus")
    assert {str(row["name"]): row["productLabel"] for row in rows} == {n: g.product_label for n, g in GPUS.items()}


def test_models_table_marks_what_the_planner_sizes_differently(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert "MLA (KV not sized)" in lines["DeepSeek-V3"]
    assert "window 128 on 18/36 layers" in lines["gpt-oss-120b"]
    assert "hybrid attention" in lines["Qwen3.5-27B"]
