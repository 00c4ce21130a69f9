"""What `vllm-stack init` leaves for the next person: the header's command writes the same file
again, `--json` says what was written and copied, and a file made meanwhile is never replaced."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

import vllm_serving.cli.init as init_verb
from tests.paths import FIXTURES, PROJECT_DIR
from vllm_serving.cli import build_parser, main

QWEN3_4B = FIXTURES / "hf" / "qwen3-4b.config.json"
HEADER = "# Stack mine, written by: "


def _project(root: Path) -> Path:
    root.mkdir()
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", root)
    return root


def _written_by(text: str) -> list[str]:
    (line,) = [line for line in text.splitlines() if line.startswith(HEADER)]
    return shlex.split(line.removeprefix(HEADER))


@pytest.mark.parametrize("given", [
    ["--gpu", "A100-80GB", "--count", "4", "--model", "Qwen3.5-27B"],
    ["--gpu", "4090", "--count", "2", "--model", "Qwen/Qwen3-8B", "--max-model-len", "16k", "--tp", "1",
     "--dp", "2", "--target", "kubernetes", "--registry", "harbor.local:30000/vllm/vllm-openai",
     "--tag", "v0.20.2", "--weights", "/data/models/qwen3 8b"],
], ids=["catalog names", "every option, typed names, a space in a path"])
def test_the_headers_command_writes_the_same_file_again(tmp_path: Path, given: list[str],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    first = _project(tmp_path / "first")
    assert main(["--project-dir", str(first), "init", "mine", *given]) == 0
    text = (first / "Pulumi.mine.yaml").read_text()
    words = _written_by(text)
    assert words[:3] == ["vllm-stack", "init", "mine"]
    again = _project(tmp_path / "again")
    capsys.readouterr()
    assert main(["--project-dir", str(again), *words[1:]]) == 0
    assert (again / "Pulumi.mine.yaml").read_text() == text
    assert "taken as" not in capsys.readouterr().err  # the header spells names as the catalog does


def test_json_says_what_was_written_and_where_the_config_was_copied(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path / "p")
    assert main(["--project-dir", str(project), "init", "mine", "--gpu", "L4", "--count", "2",
                 "--model-config", str(QWEN3_4B), "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    copied = project / "models" / "qwen3-4b" / "config.json"
    assert copied.read_bytes() == QWEN3_4B.read_bytes()
    assert {key: said[key] for key in ("stack", "file", "written", "configCopiedTo", "gpu", "count", "model")} == {
        "stack": "mine", "file": str(project / "Pulumi.mine.yaml"), "written": True,
        "configCopiedTo": str(copied), "gpu": "L4", "count": 2, "model": "models/qwen3-4b/config.json"}
    # the engine it chose, under the keys the stack file has
    import yaml

    engine = yaml.safe_load((project / "Pulumi.mine.yaml").read_text())["config"]["vllm-serving:engine"]
    assert {key: said["engine"][key] for key in ("tensorParallelSize", "dataParallelSize", "dtype", "maxModelLen")} \
        == {key: engine.get(key, 1) for key in ("tensorParallelSize", "dataParallelSize", "dtype", "maxModelLen")}


def test_a_file_made_while_init_decided_is_kept_and_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # another `init` (or an editor) creates the file after the up-front check: the write refuses it
    project = _project(tmp_path / "p")
    target = project / "Pulumi.mine.yaml"
    decide = init_verb.new_stack

    def decide_while_someone_writes(*args: object, **kwargs: object) -> init_verb.NewStack:
        target.write_text("config: {}  # a colleague's\n")
        return decide(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(init_verb, "new_stack", decide_while_someone_writes)
    assert main(["--project-dir", str(project), "init", "mine", "--gpu", "L4", "--count", "1",
                 "--model-config", str(QWEN3_4B)]) == 2
    assert capsys.readouterr().err == (f"vllm-stack init: {target} already exists; refusing to overwrite it, "
                                       "nothing written\n")
    assert target.read_text() == "config: {}  # a colleague's\n"
    assert not (project / "models").exists()  # the config.json copy is taken back


def test_stdout_is_checked_as_the_written_file_would_be(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the project's Pulumi.yaml defaults sections init does not write (capacity here): `--stdout`
    # must find what `check` finds once the file is written, and print the text it would write
    project = _project(tmp_path / "p")
    with (project / "Pulumi.yaml").open("a") as defaults:
        defaults.write("  vllm-serving:capacity:\n    value:\n      minConcurrency: 500\n")
    given = ["--project-dir", str(project), "init", "mine", "--gpu", "L4", "--count", "1", "--model", "Qwen3-8B"]
    assert main([*given, "--stdout"]) == 1
    printed = capsys.readouterr().out
    assert main([*given, "--stdout", "--json"]) == 1
    unwritten = json.loads(capsys.readouterr().out)
    assert not (project / "Pulumi.mine.yaml").exists()
    assert main([*given, "--json"]) == 1
    written = json.loads(capsys.readouterr().out)
    assert unwritten["text"] == printed == (project / "Pulumi.mine.yaml").read_text()
    assert "text" not in written and unwritten["written"] is False and unwritten["file"] is None
    assert unwritten["findings"] == written["findings"]
    assert [f["code"] for f in written["findings"]] == ["capacity-below-min-concurrency"]


@pytest.mark.parametrize(("engines", "starts", "ends"), [
    ([], "wrote {}: TP 1, dtype bfloat16, maxModelLen ", " limits it); checking it:"),
    (["--tp", "1", "--dp", "2"], "wrote {}: TP 1 x DP 2, dtype bfloat16, ", " limits it); checking it:"),
    (["--max-model-len", "16k"], "wrote {}: TP 1, dtype bfloat16, maxModelLen 16000 ", " (as asked); checking it:"),
])
def test_the_summary_names_data_parallel_engines_and_what_set_the_length(
        tmp_path: Path, engines: list[str], starts: str, ends: str, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path / "p")
    count = "2" if "--dp" in engines else "1"
    assert main(["--project-dir", str(project), "init", "mine", "--gpu", "L4", "--count", count,
                 "--model", "Qwen3-8B", *engines]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("wrote ")]
    assert line.startswith(starts.format(project / "Pulumi.mine.yaml")) and line.endswith(ends), line


def test_new_stack_reads_the_model_config_against_the_project_when_given_none(tmp_path: Path) -> None:
    # new_stack without the source read already (a caller outside the verb): the file is named as
    # the project sees it, where it lies inside the project
    project = _project(tmp_path / "p")
    config = project / "models" / "Qwen3-4B" / "config.json"
    config.parent.mkdir(parents=True)
    shutil.copy(QWEN3_4B, config)
    args = build_parser().parse_args(["--project-dir", str(project), "init", "mine", "--gpu", "L4", "--count", "1",
                                      "--model-config", str(config)])
    stack = init_verb.new_stack(args)
    assert (stack.config_file, stack.weights, stack.served_name) == (
        "models/Qwen3-4B/config.json", "/models/Qwen3-4B", "qwen3-4b")


def test_count_is_required(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # how many GPUs the host has decides TP and DP: init never guesses it
    project = _project(tmp_path / "p")
    with pytest.raises(SystemExit) as stop:
        main(["--project-dir", str(project), "init", "mine", "--gpu", "L4", "--model", "Qwen3-8B"])
    assert stop.value.code == 2
    assert "the following arguments are required: --count" in capsys.readouterr().err
    assert list(project.iterdir()) == [project / "Pulumi.yaml"]


def test_json_gives_the_weights_per_gpu_as_capacity_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # init's choice and `vllm-stack capacity` for the same model, GPU and TP read the same GiB
    project = _project(tmp_path / "p")
    assert main(["--project-dir", str(project), "init", "mine", "--gpu", "L4", "--count", "1", "--model", "Qwen3-8B",
                 "--stdout", "--json"]) == 0
    chosen = json.loads(capsys.readouterr().out)["engine"]
    assert main(["capacity", "--model", "Qwen3-8B", "--gpu", "L4", "--tp", "1", "--json"]) in (0, 1)
    sized = json.loads(capsys.readouterr().out)
    assert chosen["weightsGibPerGpu"] == sized["weights_gib_per_gpu"] != round(sized["weights_gib_per_gpu"])


@pytest.mark.parametrize("count", ["0", "65", "two"])
def test_a_count_it_cannot_use_says_what_to_give(tmp_path: Path, count: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path / "p")
    with pytest.raises(SystemExit):
        main(["--project-dir", str(project), "init", "mine", "--gpu", "L4", "--count", count, "--model", "Qwen3-8B"])
    assert f"argument --count: '{count}': give the host's GPU count, a whole number from 1 to 64" in (
        capsys.readouterr().err)


def test_stdout_json_says_how_names_were_taken_and_what_set_the_length(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = _project(tmp_path / "p")
    assert main(["--project-dir", str(project), "init", "mine", "--gpu", "4090", "--count", "1", "--model", "Qwen3-8B",
                 "--max-model-len", "16k", "--stdout", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["notes"] == ["--gpu '4090' taken as RTX-4090 (the only entry whose names include 4090)"]
    assert (said["engine"]["maxModelLen"], said["engine"]["limitedBy"]) == (16000, "asked")
    # requests of 16,000 tokens at once, as `capacity` counts them for the same server
    assert main(["capacity", "--model", "Qwen3-8B", "--gpu", "RTX-4090", "--tp", "1", "--max-model-len", "16000",
                 "--json"]) in (0, 1)
    concurrency = json.loads(capsys.readouterr().out)["max_concurrency"]
    assert said["engine"]["concurrency"] == concurrency != round(concurrency)
