"""`vllm-stack gpus` and `models` list exactly the names `hardware.gpu` and `model.name` accept."""

from __future__ import annotations

import json

import pytest

from vllm_serving.catalog.gpus import find_gpu
from vllm_serving.catalog.models import find_model
from vllm_serving.cli import main


@pytest.mark.parametrize(("verb", "find"), [("gpus", find_gpu), ("models", find_model)])
def test_every_listed_name_is_accepted_by_the_config(capsys, verb: str, find) -> None:
    assert main([verb, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows, f"{verb} lists nothing"
    for row in rows:
        assert find(row["name"]) is not None, row["name"]


def test_gpu_table_shows_memory_cc_the_kubernetes_label_and_the_aliases(capsys) -> None:
    assert main(["gpus"]) == 0
    lines = capsys.readouterr().out.splitlines()
    line = next(ln for ln in lines if ln.startswith("V100-32GB "))
    assert line.split() == ["V100-32GB", "7.0", "32", "Volta", "Tesla-V100-SXM2-32GB", "v100-sxm2-32gb"]
    assert "nvidia-smi's name" in " ".join(lines)  # and what else --gpu takes
