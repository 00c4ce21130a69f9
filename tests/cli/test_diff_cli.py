"""`vllm-stack diff`: the reviewer's view of v100 -> a100, JSON, and diff(1)'s exit codes."""

from __future__ import annotations

import json
import re
import shutil
from itertools import takewhile
from pathlib import Path

import pytest
import yaml

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.cli import main


def line_of(out: str, section: str, key: str) -> str:
    """The change line for `key` under the `section` title, columns collapsed to single spaces."""
    lines = out.splitlines()
    start = lines.index(f"  {section}") + 1
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        if line.split()[0] == key:
            return re.sub(r"\s+", " ", line.strip())
    raise AssertionError(f"no {key} under {section}")


def test_v100_to_a100_shows_what_a_reviewer_wants(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "diff", "v100", "a100"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "v100 -> a100"
    assert line_of(out, "image", "reference") == (
        "reference 192.168.122.156:30000/vllm/vllm-openai:v0.19.1 -> vllm/vllm-openai:v0.19.1")
    assert line_of(out, "vllm argv", "--tensor-parallel-size") == "--tensor-parallel-size 8 -> 4"
    assert line_of(out, "vllm argv", "--dtype") == "--dtype half -> (unset)"
    assert line_of(out, "vllm argv", "--kv-cache-dtype") == "--kv-cache-dtype (unset) -> fp8"
    assert line_of(out, "vllm argv", "--max-model-len") == "--max-model-len 8192 -> 262144"
    assert line_of(out, "mounts", "/data/models/Qwen3.5-27B") == (
        "/data/models/Qwen3.5-27B /u02/models/Qwen3.5-27B (read-only, bind) -> (unset)")
    assert line_of(out, "mounts", "/root/.cache/vllm") == (
        "/root/.cache/vllm /u02/models/data/vllm-cache (writable, bind) -> vllm-cache (writable, volume)")
    assert line_of(out, "ports", "8000") == "8000 0.0.0.0:30006 -> 0.0.0.0:8000"
    assert line_of(out, "GPU", "name") == "name V100-32GB -> A100-80GB"
    assert "    requests of max-model-len at once 93.78 -> 27.27" in re.sub(r"(?<=\S) {2,}", " ", out)
    # sections in reading order, each titled once, flags unchanged on both sides absent
    titles = [line.strip() for line in out.splitlines() if line.startswith("  ") and not line.startswith("    ")]
    assert titles == ["GPU", "model", "image", "vllm argv", "env", "mounts", "ports",
                      "container", "endpoints", "capacity"]
    assert "--enable-prefix-caching" not in out


def test_columns_line_up_within_a_section(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--project-dir", str(PROJECT_DIR), "diff", "v100", "a100"])
    lines = capsys.readouterr().out.splitlines()
    argv = list(takewhile(lambda line: line.startswith("    "), lines[lines.index("  vllm argv") + 1:]))
    value_columns = {len(line) - len(line[4:].split(" ", 1)[1].lstrip()) for line in argv}
    assert len(argv) > 3 and len(value_columns) == 1


def test_json_is_machine_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "diff", "v100", "a100", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["a"], data["b"], data["identical"]) == ("v100", "a100", False)
    assert {"section": "argv", "key": "--kv-cache-dtype", "a": None, "b": "fp8",
            "kind": "added"} in data["changes"]
    assert {"section": "gpu", "key": "name", "a": "V100-32GB", "b": "A100-80GB",
            "kind": "changed"} in data["changes"]


def test_identical_stacks_print_one_line_and_exit_0(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copy(project / "Pulumi.v100.yaml", project / "Pulumi.v100-copy.yaml")
    assert main(["--project-dir", str(project), "diff", "v100", "v100-copy"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == "v100 and v100-copy resolve to the same deployment"
    assert main(["--project-dir", str(project), "diff", "v100", "v100-copy", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"a": "v100", "b": "v100-copy", "identical": True,
                                                   "changes": []}


def test_an_edited_copy_shows_only_the_edit(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (project / "Pulumi.a100.yaml").read_text()
    (project / "Pulumi.a100-next.yaml").write_text(text.replace("tag: v0.19.1", "tag: v0.20.0"))
    assert main(["--project-dir", str(project), "diff", "a100", "a100-next", "--json"]) == 1
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert [(c["section"], c["key"]) for c in changes][0] == ("image", "reference")
    # v0.20 subtracts its CUDA graph estimate before sizing the KV cache (v0.19 only logs it):
    # vllm/envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to 1 from v0.20.0
    assert {c["section"] for c in changes} == {"image", "capacity"}


def test_a_missing_stack_exits_2_with_one_line_naming_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "diff", "v100", "v99"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Pulumi.v99.yaml" in lines[0] and "no such stack file" in lines[0]
    assert captured.out == "" and "Traceback" not in captured.err


def test_both_bad_stacks_are_named_and_a_bad_setting_exits_2(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (project / "Pulumi.v100.yaml").read_text()
    (project / "Pulumi.bad.yaml").write_text(text.replace("maxModelLen: 8192", "maxModelLen: 8k"))
    assert main(["--project-dir", str(project), "diff", "bad", "v99"]) == 2
    err = capsys.readouterr().err
    assert "vllm-serving:engine.maxModelLen" in err and "Pulumi.v99.yaml" in err


def test_other_commands_exit_2_on_a_missing_stack_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), "plan", "v99"]) == 2


def test_capacity_reads_in_words_and_the_planners_fields_stay_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    """The reviewer gets the capacity summary's figures by name, not the planner's field names
    (`linear_state_bytes_per_seq_per_gpu`); --json keeps every field."""
    main(["--project-dir", str(PROJECT_DIR), "diff", "v100", "a100"])
    lines = capsys.readouterr().out.splitlines()
    capacity = list(takewhile(lambda line: line.startswith("    "), lines[lines.index("  capacity") + 1:]))
    assert [line.split("  ")[2] for line in capacity[:2]] == ["requests of max-model-len at once",
                                                             "the same at the worst measured error"]
    assert not any(re.search(r"\b[a-z]+_[a-z_]+\b", line) for line in capacity), capacity
    assert re.fullmatch(r"    \(\d+ more figures of the estimate change: --json lists them\)", capacity[-1])
    main(["--project-dir", str(PROJECT_DIR), "diff", "v100", "a100", "--json"])
    keys = {c["key"] for c in json.loads(capsys.readouterr().out)["changes"] if c["section"] == "capacity"}
    assert {"max_concurrency", "linear_state_bytes_per_seq_per_gpu", "block_size"} <= keys


def test_a_capacity_setting_keeps_its_config_key(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (project / "Pulumi.v100.yaml").read_text()
    (project / "Pulumi.v100-min.yaml").write_text(
        text.replace("config:\n", "config:\n  vllm-serving:capacity:\n    minConcurrency: 4\n", 1))
    assert main(["--project-dir", str(project), "diff", "v100", "v100-min"]) == 1
    out = capsys.readouterr().out
    assert line_of(out, "capacity", "minConcurrency") == "minConcurrency (unset) -> 4"


def test_another_model_shows_what_a_reviewer_weighs_and_counts_the_rest(project: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Another model differs in every layer count and head size: its kind, size, precision and
    longest context are shown, the rest counted (all of them under --json)."""
    for stack, model_name in (("small", "Qwen3-8B"), ("big", "Qwen3.5-27B")):
        assert main(["--project-dir", str(project), "init", stack, "--gpu", "L40S", "--count", "4",
                     "--model", model_name]) == 0
    capsys.readouterr()
    assert main(["--project-dir", str(project), "diff", "small", "big"]) == 1
    lines = capsys.readouterr().out.splitlines()
    model = list(takewhile(lambda line: line.startswith("    "), lines[lines.index("  model") + 1:]))
    assert [line.split()[0] for line in model[:-1]] == [
        "architecture.architecture", "architecture.maxPositionEmbeddings", "architecture.paramsBillion",
        "name", "servedModelName"]
    hidden = int(re.fullmatch(r"    \((\d+) more architecture facts differ with the model: --json lists them\)",
                              model[-1]).group(1))  # type: ignore[union-attr]
    main(["--project-dir", str(project), "diff", "small", "big", "--json"])
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert hidden + 3 == sum(c["key"].startswith("architecture.") for c in changes if c["section"] == "model")


def test_an_empty_value_reads_as_set_not_unset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # VLLM_LOGGING_PREFIX="" is set in the container's environment: a reviewer must not read it as unset
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    doc = yaml.safe_load(stack_file("a100").read_text(encoding="utf-8"))
    (tmp_path / "Pulumi.before.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    doc["config"]["vllm-serving:engine"].setdefault("env", {})["VLLM_LOGGING_PREFIX"] = ""
    (tmp_path / "Pulumi.after.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert main(["--project-dir", str(tmp_path), "diff", "before", "after"]) == 1
    assert capsys.readouterr().out.splitlines()[-1].split() == ["VLLM_LOGGING_PREFIX", "(unset)", "->", '""']
