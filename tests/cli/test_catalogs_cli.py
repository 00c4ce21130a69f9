"""`vllm-stack gpus` and `models` list exactly the names `hardware.gpu` and `model.name` accept."""

from __future__ import annotations

import json

import pytest

from vllm_serving.catalog.gpus import GPUS, find_gpu
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
    assert line.split() == ["V100-32GB", "7.0", "31.7", "Volta", "Tesla-V100-SXM2-32GB", "v100-sxm2-32gb"]
    assert "nvidia-smi's name" in " ".join(lines)  # and what else --gpu takes


def test_models_table_notes_what_sets_a_model_apart_for_sizing(capsys) -> None:
    assert main(["models"]) == 0
    rows = {line.split()[0]: line.split(maxsplit=6) for line in capsys.readouterr().out.splitlines()[1:] if line}
    # openai/gpt-oss-20b config.json: 24 layers alternating sliding (window 128) and full, 32 local experts,
    # 4 per token, 131072 positions, MXFP4 experts
    assert rows["gpt-oss-20b"] == ["gpt-oss-20b", "openai/gpt-oss-20b", "GptOssForCausalLM", "20.91B", "mxfp4",
                                   "131072", "window 128 on 12/24 layers, MoE 32x4"]
    # deepseek-ai/DeepSeek-V3 config.json: kv_lora_rank (MLA), 256 routed experts, 8 per token,
    # num_nextn_predict_layers 1, FP8 weights
    assert rows["DeepSeek-V3"][4:] == ["fp8", "163840", "MLA (KV not sized), MoE 256x8, 1 MTP layer(s)"]
    # Qwen/Qwen3.6-27B: Gated DeltaNet (linear attention) beside full attention, one MTP layer
    assert rows["Qwen3.6-27B"][5:] == ["262144", "hybrid attention, 1 MTP layer(s)"]
    assert rows["Qwen3-32B"] == ["Qwen3-32B", "Qwen/Qwen3-32B", "Qwen3ForCausalLM", "32.76B", "bfloat16", "40960"]


def test_models_json_gives_the_hugging_face_id_and_the_weights(capsys) -> None:
    assert main(["models", "--json"]) == 0
    qwen3 = next(row for row in json.loads(capsys.readouterr().out) if row["name"] == "Qwen3-32B")
    assert (qwen3["huggingFaceId"], qwen3["numAttentionHeads"], qwen3["numKeyValueHeads"]) == ("Qwen/Qwen3-32B", 64, 8)
    assert abs(qwen3["totalWeightsGib"] - 32.76e9 * 2 / 2**30) < 0.05  # bf16: 2 bytes a parameter


def test_models_json_gives_the_weights_to_the_hundredth_of_a_gib(capsys) -> None:
    # Qwen/Qwen3-8B: 8.19 B parameters in bf16 (the catalog's count, to 0.005 B: +-0.01 GiB)
    assert main(["models", "--json"]) == 0
    qwen3 = next(row for row in json.loads(capsys.readouterr().out) if row["name"] == "Qwen3-8B")
    assert abs(qwen3["totalWeightsGib"] - 8.19e9 * 2 / 2**30) < 0.01
    assert qwen3["totalWeightsGib"] == round(qwen3["totalWeightsGib"], 2)


def test_gpus_json_gives_capability_memory_and_precisions(capsys) -> None:
    assert main(["gpus", "--json"]) == 0
    gpus = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    # NVIDIA's data sheets: Volta 7.0 without bf16, Ampere 8.0 with bf16 but no FP8, Ada 8.9 and Hopper 9.0 with FP8
    assert {name: (gpus[name]["computeCapability"], gpus[name]["bf16"], gpus[name]["fp8"])
            for name in ("V100-32GB", "A100-80GB", "L4", "H100-80GB")} == {
        "V100-32GB": ("7.0", False, False), "A100-80GB": ("8.0", True, False), "L4": ("8.9", True, True),
        "H100-80GB": ("9.0", True, True)}
    assert (gpus["V100-32GB"]["memoryGib"], gpus["V100-32GB"]["architecture"]) == (31.7, "Volta")
    v100 = gpus["V100-32GB"]
    assert v100["productLabel"] == "Tesla-V100-SXM2-32GB" and "v100-sxm2-32gb" in v100["aliases"]


@pytest.mark.parametrize(("verb", "titles"), [
    ("models", ["MODEL", "HUGGING FACE ID", "ARCHITECTURE", "PARAMS", "WEIGHTS", "CONTEXT", "NOTES"]),
    ("gpus", ["GPU", "CC", "GiB", "ARCHITECTURE", "KUBERNETES LABEL (nvidia.com/gpu.product)", "ALIASES"]),
])
def test_each_table_titles_its_columns_above_them(capsys, verb: str, titles: list[str]) -> None:
    # titles in capitals (a unit and a label name as they are written) read apart from the values
    assert main([verb]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    starts = [header.index(title) for title in titles]
    assert starts[0] == 0 and starts == sorted(starts)
    assert " ".join(header.split()) == " ".join(titles)
    # every value begins under its title
    row = next(r for r in rows if len(r.split()) >= len(titles) and not r.startswith(" "))
    assert all(row[at - 1] == " " and row[at] != " " for at in starts[1:]), (header, row)


def test_models_json_leaves_out_the_facts_a_model_does_not_have(capsys) -> None:
    # a dense model has no experts, a full-attention one no window: absent, not null
    assert main(["models", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(row["name"], key) for row in rows for key, value in row.items() if value is None] == []
    qwen3 = next(row for row in rows if row["name"] == "Qwen3-8B")
    assert "numExperts" not in qwen3 and "slidingWindow" not in qwen3


def test_gpus_json_gives_the_memory_in_gib_to_a_tenth(capsys) -> None:
    # what `nvidia-smi` reports in MiB, in GiB as the tables and the planner read it
    assert main(["gpus", "--json"]) == 0
    gpus = json.loads(capsys.readouterr().out)
    assert [(g["name"], g["memoryGib"]) for g in gpus if g["memoryGib"] != round(g["memoryMib"] / 1024, 1)] == []
    assert {g["name"]: g["memoryGib"] for g in gpus}["V100-16GB"] == 15.8  # 16,160 MiB


def test_the_gpu_table_reads_the_memory_as_the_json_gives_it(capsys) -> None:
    assert main(["gpus", "--json"]) == 0
    gib = {g["name"]: g["memoryGib"] for g in json.loads(capsys.readouterr().out)}
    assert main(["gpus"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]
            if line.split() and line.split()[0] in gib]
    assert len(rows) == len(gib) and all(float(row[2]) == gib[row[0]] for row in rows)


def test_the_models_table_ends_by_naming_where_every_fact_and_its_source_are(capsys) -> None:
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Every entry's source (its config.json) and facts: vllm-stack models --json" in lines


def test_the_gpu_table_ends_with_the_names_gpu_takes_after_a_blank_line(capsys) -> None:
    assert main(["gpus"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("--gpu and --model (init, capacity)"))
    assert lines[start - 1] == "" and lines[start - 2].split()[0] in GPUS  # the table's last row above
    assert all(len(line) <= 100 for line in lines[start:])
