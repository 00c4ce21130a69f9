"""A machine without a GPU: `--gpu cpu` (what a laptop's owner types) is not a catalog miss with
suggestions of GPUs, but the way to the CPU target - the `local` example and `make demo`."""

from __future__ import annotations

import json
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


def test_a_name_taken_by_interpretation_is_said_back(empty_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # nvidia-smi's name and a Hugging Face id: the catalog entries they are, said on stderr (and in init's JSON)
    assert main(["capacity", "--model", "Qwen/Qwen3-32B", "--gpu", "NVIDIA GeForce RTX 4090", "--tp", "1"]) == 1
    err = capsys.readouterr().err
    assert "vllm-stack: --gpu 'NVIDIA GeForce RTX 4090' taken as RTX-4090" in err
    assert "vllm-stack: --model 'Qwen/Qwen3-32B' taken as Qwen3-32B" in err
    main(["--project-dir", str(empty_project), "init", "box", "--count", "1", "--gpu", "NVIDIA GeForce RTX 4090",
          "--model", "Qwen/Qwen3-0.6B", "--json"])
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert [note.split(" taken as ")[1].split()[0] for note in notes] == ["RTX-4090", "Qwen3-0.6B"]


@pytest.mark.parametrize(("flag", "typed", "listing"), [("--gpu", "H300", "vllm-stack gpus"),
                                                         ("--model", "Qwen3-8BX", "vllm-stack models")])
def test_an_unknown_name_says_which_verb_lists_the_catalog(flag: str, typed: str, listing: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    given = {"--gpu": "L4", "--model": "Qwen3-8B", flag: typed}
    assert main(["capacity", "--gpu", given["--gpu"], "--model", given["--model"]]) == 2
    assert f"({listing} lists them)" in capsys.readouterr().err
