"""The strict stack-file reader: what `yaml.safe_load` gives for a sound file; for a hostile one,
a refusal naming where, before it costs memory or time (no RecursionError, no alias expansion,
never the whole of a huge file in memory)."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.paths import PROJECT_DIR, ROOT, stack_file
from vllm_serving.stack_files import strict_yaml
from vllm_serving.stack_files.strict_yaml import MAX_DEPTH, MAX_FILE_BYTES, YamlRefused, load

PARSERS = [pytest.param(yaml.SafeLoader, id="pure-python")]
if getattr(yaml, "__with_libyaml__", False):
    PARSERS.append(pytest.param(yaml.CSafeLoader, id="libyaml"))


@pytest.fixture(params=PARSERS)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> object:
    """Both event parsers PyYAML may use: the limits must hold whichever is installed."""
    monkeypatch.setattr(strict_yaml, "_PARSER", request.param)
    return request.param


def _refusal(text: str) -> YamlRefused:
    with pytest.raises(YamlRefused) as refused:
        load(text)
    return refused.value


def _sound_yaml_files() -> Iterator[Path]:
    """The shipped stack files and the stack files tests use (not the refused corpus, not CRDs)."""
    yield from sorted(PROJECT_DIR.glob("Pulumi*.yaml"))
    yield from sorted((ROOT / "tests" / "stacks").rglob("*.yaml"))


def test_sound_files_read_exactly_as_safe_load(parser: object) -> None:
    compared = 0
    for path in _sound_yaml_files():
        text = path.read_text(encoding="utf-8")
        try:
            expected = yaml.safe_load(text)
        except yaml.YAMLError:
            continue
        assert load(text) == expected, path
        compared += 1
    assert compared >= 6  # at least Pulumi.yaml and the shipped stacks


@pytest.mark.parametrize(("text", "where", "lines"), [
    ("config:\n  a:x: 1\n  b:x: 2\n  a:x: 3\n", ("config", "a:x"), "(lines 2 and 4)"),
    ("config:\n  s:\n    k: 1\n    j: 2\n    k: 1\n", ("config", "s", "k"), "(lines 3 and 5)"),
    ("config: {s: {k: 1, k: 2}}\n", ("config", "s", "k"), "(lines 1 and 1)"),
    ("config:\n  s:\n    - {name: a, name: b}\n", ("config", "s", 0, "name"), "(lines 3 and 3)"),
])
def test_duplicate_keys_are_refused_with_both_lines(parser: object, text: str, where: tuple[object, ...],
                                                    lines: str) -> None:
    refused = _refusal(text)
    assert refused.code == "stack-file-duplicate-key"
    assert refused.where == where
    assert f"is set twice {lines}" in refused.message


@pytest.mark.parametrize(("text", "where"), [
    ("config:\n  a:x: &p /data\n  b:x: *p\n", ("config", "a:x")),
    ("config:\n  a:x: *p\n", ("config", "a:x")),
    ("config:\n  a:x: &s {k: 1}\n", ("config", "a:x")),
    ("config:\n  a:x:\n    <<: {k: 1}\n", ("config", "a:x")),
])
def test_anchors_aliases_and_merge_keys_are_refused(parser: object, text: str, where: tuple[object, ...]) -> None:
    refused = _refusal(text)
    assert refused.code == "stack-file-alias"
    assert refused.where == where
    assert "write" in refused.fix


def _alias_bomb(levels: int = 9, width: int = 9) -> str:
    text = "config:\n  vllm-serving:engine:\n    extraArgs:\n      - &a0 [" + ", ".join(['"lol"'] * width) + "]\n"
    for level in range(1, levels):
        text += f"      - &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]\n"
    return text


def test_alias_bomb_is_refused_before_anything_expands(parser: object) -> None:
    """9^9 strings once expanded; refused at the first anchor with a few kilobytes at most."""
    text = _alias_bomb()
    tracemalloc.start()
    try:
        refused = _refusal(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refused.code == "stack-file-alias"
    assert refused.where == ("config", "vllm-serving:engine", "extraArgs", 0)
    assert peak < 1_000_000, peak


@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_100k_nested_brackets_are_refused_without_recursion_error(parser: object, opening: str) -> None:
    closing = "]" if opening == "[" else "}"
    text = "config:\n  vllm-serving:engine:\n    extraArgs: " + opening * 100_000 + closing * 100_000 + "\n"
    refused = _refusal(text)
    assert refused.code == "stack-file-too-deep"
    assert refused.where[:3] == ("config", "vllm-serving:engine", "extraArgs")
    assert f"deeper than {MAX_DEPTH} levels" in refused.message


def test_depth_limit_is_exact(parser: object) -> None:
    """MAX_DEPTH collections in all (the root mapping counts) read; one more is refused."""
    def nested(depth: int) -> str:
        return "[" * (depth - 1) + "]" * (depth - 1)
    assert load(f"k: {nested(MAX_DEPTH)}")["k"] is not None
    assert _refusal(f"k: {nested(MAX_DEPTH + 1)}").code == "stack-file-too-deep"


def test_block_nesting_is_refused_too(parser: object) -> None:
    text = "config:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(MAX_DEPTH + 5))
    assert _refusal(text).code == "stack-file-too-deep"


def test_a_huge_file_is_never_read_whole(tmp_path: Path) -> None:
    """A 1 GiB (sparse) file: refused after reading the cap plus one byte."""
    path = tmp_path / "Pulumi.huge.yaml"
    with path.open("wb") as handle:
        handle.write(b"config:\n  vllm-serving:engine: {}\n# ")
        handle.truncate(1 << 30)
    tracemalloc.start()
    try:
        with pytest.raises(YamlRefused) as refused:
            strict_yaml.load_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refused.value.code == "stack-file-too-large"
    assert refused.value.where == ()
    assert peak < 3 * MAX_FILE_BYTES, peak


def test_a_file_at_the_cap_is_read(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.cap.yaml"
    head = "config:\n  a:b: 1\n"
    path.write_text(head + "#" * (MAX_FILE_BYTES - len(head)), encoding="utf-8")
    assert strict_yaml.load_file(path) == {"config": {"a:b": 1}}


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "Pulumi.fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(YamlRefused) as refused:
        strict_yaml.load_file(fifo)
    assert "not a regular file" in refused.value.message


def test_a_long_value_is_quoted_as_a_short_excerpt(parser: object) -> None:
    secret_like = "LEAKME" + "x" * 10_000
    refused = _refusal(f"config:\n  a:b: {secret_like}\n")
    assert refused.where == ("config", "a:b")
    assert len(refused.message) < 200 and "10006 characters" in refused.message


@pytest.mark.parametrize(("text", "fragment"), [
    ("config: {}\n---\nconfig: {}\n", "second YAML document"),
    ("config:\n  a:b: !!set {x}\n", "YAML tag"),
    ("config:\n  ? [a, b]\n  : 1\n", "not a plain word"),
])
def test_other_shapes_a_stack_file_never_has(parser: object, text: str, fragment: str) -> None:
    assert fragment in _refusal(text).message


def test_a_bom_and_windows_line_ends_read_as_the_plain_file(parser: object) -> None:
    """Editors on Windows save both; YAML (and Pulumi's parser) take them, so the reader does."""
    text = (stack_file("a100")).read_text(encoding="utf-8")
    assert load("\ufeff" + text.replace("\n", "\r\n")) == load(text)


def test_yaml_1_1_booleans_read_as_pulumi_reads_them(parser: object) -> None:
    """Pulumi parses stack files with gopkg.in/yaml.v2, a YAML 1.1 reader: an unquoted no, off,
    yes or on is a boolean there too, so check sees what the program gets (the settings then say
    how to quote a `restart: no`)."""
    assert load("a: no\nb: on\nc: 'no'\nd: 30006:8000\n") == {"a": False, "b": True, "c": "no", "d": "30006:8000"}


@pytest.mark.parametrize(("text", "code", "message", "fix"), [
    ("config:\n  a:x: &base {k: 1}\n", "stack-file-alias", "defines the YAML anchor &base (line 2)",
     "write each value out in full: stack files take no anchors (&) or aliases (*)"),
    ("config:\n  a:x:\n    <<: 1\n", "stack-file-alias", "uses a YAML merge key `<<` (line 3)",
     "write the keys out in full: stack files take no merge keys"),
    ("config:\n  a:x: !mine {k: 1}\n", "stack-file", "uses the YAML tag '!mine' (line 2)",
     "remove the tag: stack files hold plain mappings, lists and values"),
])
def test_a_refusal_names_what_the_user_wrote_and_its_line(parser: object, text: str, code: str, message: str,
                                                          fix: str) -> None:
    """The anchor's name, the tag as written, the line counted by hand: what to look for in the file."""
    refused = _refusal(text)
    assert (refused.code, refused.message, refused.fix) == (code, message, fix)


def test_a_file_one_byte_over_the_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.cap.yaml"
    head = "config:\n  a:b: 1\n"
    path.write_text(head + "#" * (MAX_FILE_BYTES + 1 - len(head)), encoding="utf-8")
    with pytest.raises(YamlRefused) as refused:
        strict_yaml.load_file(path)
    assert (refused.value.code, refused.value.message, refused.value.fix) == (
        "stack-file-too-large", "is larger than 256 KiB", "a stack file holds settings only; keep it under 256 KiB")
