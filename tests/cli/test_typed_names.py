"""A machine without a GPU: `--gpu cpu` (what a laptop's owner types) is not a catalog miss with
suggestions of GPUs, but the way to the CPU target - the `local` example and `make demo`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.paths import ROOT, stack_file
from vllm_serving.cli import main


@pytest.mark.parametrize("typed", ["cpu", "CPU", "none", "no-gpu"])
@pytest.mark.parametrize("verb", [["init", "laptop", "--count", "1"], ["capacity"]])
def test_no_gpu_points_to_the_cpu_example(typed: str, verb: list[str], empty_project: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--project-dir", str(empty_project), *verb, "--gpu", typed, "--model", "Qwen3-0.6B"])
    err = capsys.readouterr().err
    assert code == 2 and "did you mean" not in err
    assert "Pulumi.local.yaml" in err and "make demo" in err
    assert list(empty_project.glob("Pulumi.laptop.yaml")) == []


def test_the_example_it_names_is_a_cpu_stack_and_make_demo_runs_it() -> None:
    """The hint's example is shipped (its test copy is a CPU stack) and is the demo's default."""
    local = yaml.safe_load(stack_file("local").read_text(encoding="utf-8"))["config"]
    assert local["vllm-serving:hardware"]["device"] == "cpu"
    assert "DEMO_STACK ?= local" in (ROOT / "Makefile").read_text(encoding="utf-8")


def test_a_device_index_is_not_taken_for_no_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    """`--gpu 0` is someone's device index, not "no GPU": a catalog miss as any other."""
    assert main(["capacity", "--gpu", "0", "--model", "Qwen3-0.6B"]) == 2
    assert "Pulumi.local.yaml" not in capsys.readouterr().err
