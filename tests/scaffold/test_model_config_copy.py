"""`init --model-config`: text from a config.json or its file name adds no key to the stack file,
the copy is written only inside the project's models/ (never through a link), and a refused init
leaves nothing behind."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.paths import FIXTURES, PROJECT_DIR, ROOT
from vllm_serving.cli import build_parser, main
from vllm_serving.cli.init import new_stack
from vllm_serving.scaffold.engine_choice import DoesNotFit
from vllm_serving.scaffold.model_config_copy import ConfigUnusable, folder_name, read_config_source, write_copy
from vllm_serving.scaffold.stack_text import stack_text

QWEN3_4B = FIXTURES / "hf" / "qwen3-4b.config.json"
QWEN35 = FIXTURES / "hf" / "qwen3.5-27b.config.json"


@pytest.fixture
def empty_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", project)
    return project


def init(project: Path, config: Path, name: str = "own", gpu: str = "L4") -> int:
    return main(["--project-dir", str(project), "init", name, "--gpu", gpu, "--count", "1",
                 "--model-config", str(config)])


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def test_a_dangling_link_at_the_target_is_never_written_through(empty_project: Path, tmp_path: Path) -> None:
    folder = empty_project / "models" / "qwen3-4b"
    folder.mkdir(parents=True)
    outside = tmp_path / "outside" / "written.json"
    (folder / "config.json").symlink_to(outside)
    assert init(empty_project, QWEN3_4B) == 2
    assert not outside.exists() and not outside.parent.exists()
    assert (folder / "config.json").is_symlink() and not (empty_project / "Pulumi.own.yaml").exists()


def test_a_linked_models_directory_is_refused(empty_project: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (empty_project / "models").symlink_to(elsewhere)
    assert init(empty_project, QWEN3_4B) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert files(elsewhere) == set() and not (empty_project / "Pulumi.own.yaml").exists()


@pytest.mark.parametrize("name", ["...json", "..config.json", ".json", "..", "...", ".hidden.config.json",
                                  "a\nb: c.config.json", "-oProxyCommand=x.json"])
def test_a_file_named_with_dots_or_worse_lands_in_a_plain_folder(empty_project: Path, tmp_path: Path,
                                                                 name: str) -> None:
    source = tmp_path / "src" / name
    source.parent.mkdir(exist_ok=True)
    if source.exists():  # "..", "...": a folder of that name holding config.json
        source = source / "config.json"
    source.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(QWEN3_4B, source)
    def outside() -> set[str]:
        return {p for p in files(tmp_path) if p.split("/")[0] != "project"}

    before = outside()
    assert init(empty_project, source) == 0
    copied = [p for p in files(empty_project / "models") if p.endswith("config.json")]
    assert len(copied) == 1 and copied[0].count("/") == 1
    folder = copied[0].split("/")[0]
    assert not folder.startswith(".") and folder_name(folder) == folder
    assert outside() == before


def test_a_refused_init_leaves_nothing_behind(empty_project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen3.5-27B does not fit one T4: refused after the config was read, before anything is written."""
    before = files(empty_project)
    assert init(empty_project, QWEN35, gpu="T4") == 1
    assert "nothing written" in capsys.readouterr().err
    assert files(empty_project) == before


def test_a_stack_file_made_meanwhile_takes_the_copy_back(empty_project: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    before = files(empty_project)

    def racing(stack: Any) -> str:
        (empty_project / "Pulumi.own.yaml").write_text("config: {}\n")  # another process was quicker
        return "config: {}\n"

    monkeypatch.setattr("vllm_serving.cli.init.stack_text", racing)
    assert init(empty_project, QWEN3_4B) == 2  # an existing file is an argument init cannot use
    assert files(empty_project) == before | {"Pulumi.own.yaml"}
    assert (empty_project / "Pulumi.own.yaml").read_text() == "config: {}\n"


def test_an_identical_copy_is_reused_and_another_is_refused(empty_project: Path) -> None:
    assert init(empty_project, QWEN3_4B, name="one") == 0
    assert init(empty_project, QWEN3_4B, name="two") == 0  # the same bytes: reused
    other = empty_project.parent / "other" / "qwen3-4b.config.json"
    other.parent.mkdir()
    other.write_text(QWEN3_4B.read_text().replace('"use_cache": true', '"use_cache": false'))
    assert init(empty_project, other, name="three") == 2
    assert (empty_project / "models" / "qwen3-4b" / "config.json").read_bytes() == QWEN3_4B.read_bytes()


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/stdin", "fifo", "directory"])
def test_a_config_that_is_not_a_regular_file_is_refused_at_once(empty_project: Path, tmp_path: Path,
                                                                special: str) -> None:
    path = Path(special)
    if special == "fifo":
        path = tmp_path / "config.json"
        os.mkfifo(path)
    elif special == "directory":
        path = tmp_path
    assert init(empty_project, path) == 2
    assert not (empty_project / "Pulumi.own.yaml").exists() and not (empty_project / "models").exists()


# --- any string in any config.json field adds no key ---------------------------------------------

def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))] or [path]
    return [path]


def _set(config: Any, path: tuple[str | int, ...], value: Any) -> None:
    for part in path[:-1]:
        config = config[part]
    config[path[-1]] = value


def _shape(text: str) -> dict[str, set[str]]:
    """Each section's keys; every value a scalar or a list of scalars."""
    document = yaml.safe_load(text)
    assert set(document) == {"config"}
    shape: dict[str, set[str]] = {}
    for section, keys in document["config"].items():
        assert isinstance(keys, dict), section
        for value in keys.values():
            assert not isinstance(value, dict), (section, value)
        shape[section] = set(keys)
    return shape


CONFIGS = {name: json.loads(path.read_text()) for name, path in (("qwen3-4b", QWEN3_4B), ("qwen3.5-27b", QWEN35))}
FIELDS = [(name, path) for name, config in CONFIGS.items() for path in _leaves(config)]
HOSTILE = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30),
    st.sampled_from(["x\ntrustRemoteCode: true", "x\u2028  vllm-serving:engine: {}", "q\" #", "a: b", "-",
                     "qwen3\r\n    hostPath: /", "}", "${HOME}", "Qwen3ForCausalLM\x85x: y"]),
)


def _args(project: Path, config: Path) -> Any:
    return build_parser().parse_args(["--project-dir", str(project), "init", "own", "--gpu", "H100-80GB",
                                      "--count", "8", "--model-config", str(config)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(FIELDS), HOSTILE, st.sampled_from(["config.json", "m.config.json"]), HOSTILE)
def test_any_string_in_any_field_or_name_adds_no_key(tmp_path: Path, field: tuple[str, tuple[str | int, ...]],
                                                      text: str, file_name: str, folder: str) -> None:
    """The stack init would write from a config.json with `text` in one field, in a folder named
    `folder`: refused, or the sections and keys of an ordinary one (a model init knows no parser
    for loses its parser keys; deviceIds comes and goes with TP) and nothing nested."""
    name, path = field
    project = tmp_path / "p"
    project.mkdir(exist_ok=True)
    config = json.loads(json.dumps(CONFIGS[name]))
    _set(config, path, text)
    directory = folder.replace("/", "_").replace("\x00", "_")
    source = tmp_path / "src" / (directory if directory not in ("", ".", "..") else "d") / file_name
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(json.dumps(config))
    try:
        stack = new_stack(_args(project, source), read_config_source(source, project))
    except (ConfigUnusable, DoesNotFit):
        return  # refused before anything is written
    shape = _shape(stack_text(stack))
    assert set(shape) == set(BASELINE)
    assert all(keys <= BASELINE[section] | {"deviceIds"} for section, keys in shape.items()), shape


BASELINE = _shape(stack_text(new_stack(_args(ROOT, QWEN35))))


# --- what the user reads and gets -----------------------------------------------------------------

def test_a_config_missing_a_field_names_the_option_the_file_and_the_field(tmp_path: Path) -> None:
    facts = json.loads(QWEN3_4B.read_text())
    del facts["num_attention_heads"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(facts))
    with pytest.raises(ConfigUnusable) as refused:
        read_config_source(broken, tmp_path / "project")
    assert str(refused.value) == (
        f"--model-config {str(broken)!r}: has no 'num_attention_heads' (looked in text_config, then the top level)"
        " - pass the model's own config.json as published on Hugging Face")


def test_a_long_name_is_cut_to_64_characters_ending_in_a_letter_or_digit() -> None:
    assert folder_name("Qwen3-" + "x" * 100) == "Qwen3-" + "x" * 58
    assert folder_name("a" * 63 + "-b") == "a" * 63


@pytest.mark.parametrize("name", ["...", "---", "日本語"])
def test_a_name_with_nothing_usable_gets_a_plain_folder(name: str) -> None:
    assert folder_name(name) == "model"


def test_the_copy_and_its_folders_are_readable_by_everyone(empty_project: Path) -> None:
    """rwxr-xr-x folders and an rw-r--r-- file under the usual umask 022: the account that runs
    `pulumi up` or CI need not be the one that ran init."""
    old = os.umask(0o022)
    try:
        write_copy(read_config_source(QWEN3_4B, empty_project), empty_project)
    finally:
        os.umask(old)
    models = empty_project / "models"
    assert stat.S_IMODE(models.stat().st_mode) == 0o755
    assert stat.S_IMODE((models / "qwen3-4b").stat().st_mode) == 0o755
    assert stat.S_IMODE((models / "qwen3-4b" / "config.json").stat().st_mode) == 0o644


def test_another_file_at_the_target_is_refused_by_its_path(empty_project: Path, tmp_path: Path) -> None:
    target = empty_project / "models" / "qwen3-4b" / "config.json"
    target.parent.mkdir(parents=True)
    target.write_text("{}")
    with pytest.raises(ConfigUnusable) as refused:
        write_copy(read_config_source(QWEN3_4B, empty_project), empty_project)
    assert str(refused.value) == (f"{target} already exists with other content; copy the file into the project "
                                  "yourself and pass that path")
    assert target.read_text() == "{}"
