"""What a user reads when a stack file cannot be read: the finding names the file (or the key) and
says what to write; a promoting stack is read with its source's release. Expected texts are the
refusals' own wording as users see it, the lines counted by hand in the files written here."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest
import yaml

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.findings import ConfigError, Finding
from vllm_serving.stack_files.ciphertext import is_ciphertext
from vllm_serving.stack_files.loader import (
    load_spec,
    missing_stack_fix,
    project_defaults,
    redacted,
    stack_name,
)
from vllm_serving.stack_files.namespaces import corrected, edit_distance, namespace_findings
from vllm_serving.stack_files.strict_yaml import YamlRefused, load


def _refused(path: Path) -> list[Finding]:
    with pytest.raises(ConfigError) as refused:
        load_spec(path, project_dir=path.parent)
    return refused.value.findings


def _refusals(tmp_path: Path, text: str) -> list[Finding]:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(text)
    return _refused(path)


def _one(tmp_path: Path, text: str) -> Finding:
    found = _refusals(tmp_path, text)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("text", "message", "fix"), [
    ("", "is empty", "add a `config:` mapping with the vllm-serving sections (see Pulumi.v100.yaml)"),
    ("- a\n- b\n", "holds a list, not a mapping", "start the file with `config:`"),
    ("other: 1\n", "has no `config:` mapping", "put the vllm-serving sections under a top-level `config:` key"),
    ("config:\n  vllm-serving:engine:\n\tmaxModelLen: 3\n", "is not valid YAML at line 3: the line is indented "
     "with a tab", "indent with spaces (YAML forbids tabs in indentation)"),
    # `!!int` on text: PyYAML raises a bare ValueError, which once escaped as a traceback; the line is
    # where the value starts (3), not where the quoted text ends (4)
    ('config:\n  vllm-serving:engine:\n    maxModelLen: !!int "1\n      x"\n', "is not valid YAML at line 3",
     "fix the YAML syntax (indentation, colons, quotes)"),
    # a control character: PyYAML's reader refuses it by position, with no line to name
    ("config:\n  a: \x07\n", "is not valid YAML", "fix the YAML syntax (indentation, colons, quotes)"),
])
def test_a_file_that_is_no_stack_file_names_the_file_and_the_fix(tmp_path: Path, text: str, message: str,
                                                                  fix: str) -> None:
    f = _one(tmp_path, text)
    assert (f.code, f.key, f.message, f.fix) == ("stack-file", str(tmp_path / "Pulumi.t.yaml"), message, fix)


@pytest.mark.parametrize(("text", "message"), [
    ("config:\n  a: 1\n---\nb: 2\n", "holds a second YAML document (line 3)"),
    ("config:\n  ? [a]\n  : 1\n", "has a key that is not a plain word (line 2)"),
])
def test_shapes_a_stack_file_never_has_are_stack_file_errors(tmp_path: Path, text: str, message: str) -> None:
    f = _one(tmp_path, text)
    assert (f.code, f.message) == ("stack-file", message)


def test_a_key_set_twice_names_both_lines(tmp_path: Path) -> None:
    f = _one(tmp_path, "config:\n  vllm-serving:image: {tag: a}\n  vllm-serving:image: {tag: b}\n")
    assert f.code == "stack-file-duplicate-key" and f.key == "vllm-serving:image"
    assert f.message == "'vllm-serving:image' is set twice (lines 2 and 3); YAML would keep only the last one"


def test_too_deep_a_value_names_its_key_and_line(tmp_path: Path) -> None:
    f = _one(tmp_path, "config:\n  vllm-serving:engine:\n    env:\n      A: " + "[" * 300 + "]" * 300 + "\n")
    assert (f.code, f.key) == ("stack-file-too-deep", "vllm-serving:engine.env.A")
    assert f.message == "nests deeper than 32 levels (line 4)"


def test_a_huge_file_says_why(tmp_path: Path) -> None:
    f = _one(tmp_path, "config:\n  x: '" + "a" * 2_000_000 + "'\n")
    assert f.code == "stack-file-too-large" and f.message and f.fix.startswith("a stack file holds settings only")


def test_a_refusal_reads_as_its_message() -> None:
    with pytest.raises(YamlRefused) as refused:
        load("a: 1\na: 2\n")
    assert str(refused.value) == refused.value.message


def test_a_non_specific_tag_reads_as_safe_load_reads_it() -> None:
    text = "a: ! 8192\nb: ! x\n"
    assert load(text) == yaml.safe_load(text)


def test_a_promoting_stack_with_a_misspelt_namespace_is_not_asked_for_its_release(tmp_path: Path) -> None:
    """Its image and model come from the source: only the misspelt key is reported, not a missing
    image or model section."""
    text = stack_file("v100-prod").read_text() + "  vllm-servng:network: {}\n"
    assert {f.code for f in _refusals(tmp_path, text)} == {"config-namespace-misspelt"}


def test_a_misspelt_namespace_is_reported_with_the_settings_errors(tmp_path: Path) -> None:
    codes = {f.code for f in _refusals(tmp_path, "config:\n  vllm-servng:engine: {}\n")}
    assert codes == {"config-namespace-misspelt", "config-missing"}


@pytest.mark.parametrize("namespace", ["vllm-servimg", "vlm-servinh", "vllm-serv\ue000ng"])
def test_one_or_two_letters_off_is_still_our_namespace(namespace: str) -> None:
    found = list(namespace_findings([f"{namespace}:engine"]))
    assert [f.fix for f in found] == ["rename the key to vllm-serving:engine"]


def test_a_look_alike_without_a_unicode_name_says_unnamed() -> None:
    (f,) = namespace_findings(["vllm-serv\ue000ng:engine"])
    assert "(it holds '\\ue000', U+E000 unnamed, not an ASCII letter)" in f.message


def test_a_misspelt_namespace_s_value_moves_to_the_right_key() -> None:
    assert corrected({"vllm-servng:engine": {"maxModelLen": 8192}, "docker:host": "x"}) == {
        "vllm-serving:engine": {"maxModelLen": 8192}, "docker:host": "x"}


@pytest.mark.parametrize(("a", "b", "distance"), [
    # optimal string alignment, by hand: a transposition is one edit only for neighbours
    ("ab", "ba", 1), ("ba", "ab", 1), ("xab", "bx", 3), ("abc", "ca", 3), ("aaa", "a", 2)])
def test_edit_distance_counts_only_neighbouring_swaps(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance


def test_a_missing_stack_file_says_how_to_write_one(tmp_path: Path) -> None:
    assert missing_stack_fix(tmp_path / "Pulumi.zzz.yaml") == (
        "write it with vllm-stack init zzz --gpu GPU --count N --model MODEL")


@pytest.mark.parametrize(("file", "name"), [("Pulumi.v100.yaml", "v100"), ("Pulumi.a.b.yml", "a.b")])
def test_the_stack_name_is_the_file_name_between_pulumi_and_the_extension(file: str, name: str) -> None:
    assert stack_name(Path(file)) == name


def test_a_secure_value_in_a_list_is_hidden() -> None:
    assert redacted({"a": [{"secure": "v1:x:y"}, 1]}) == {"a": ["[secret]", 1]}


def test_an_empty_secret_s_ciphertext_is_a_ciphertext() -> None:
    """Pulumi's passphrase secrets are AES-256-GCM: `v1:` base64(12-byte nonce) `:` base64(sealed),
    sealed = plaintext + 16-byte tag; an empty secret seals to the tag alone."""
    nonce, tag = base64.b64encode(bytes(12)).decode(), base64.b64encode(bytes(16)).decode()
    assert is_ciphertext(f"v1:{nonce}:{tag}", symmetric_only=True)
    assert not is_ciphertext(f"v1:{nonce}:{base64.b64encode(bytes(15)).decode()}", symmetric_only=True)


def test_a_promoting_stack_runs_its_source_s_release() -> None:
    """v100-prod sets no image or model: they come from v100-staging's file (its Harbor registry,
    tag v0.19.1, Qwen3.5-27B served as qwen3.5-27b); its own GPUs and port stay its own."""
    spec = load_spec(stack_file("v100-prod"))
    image = spec.settings.image
    assert (image.registry, image.repository, image.tag) == ("192.168.122.156:30000", "vllm/vllm-openai", "v0.19.1")
    assert spec.served_model_name == "qwen3.5-27b"
    assert spec.settings.network.host_port == 30006 and spec.settings.engine.gpu_memory_utilization == 0.8


def test_project_defaults_come_from_the_project_directory_given(tmp_path: Path) -> None:
    """A stack file read from elsewhere takes Pulumi.yaml's defaults from the project named."""
    path = tmp_path / "Pulumi.lone.yaml"
    shutil.copy(stack_file("v100"), path)
    text = path.read_text()
    # without the image section, the tag is the project's default (tests/fixtures/project/Pulumi.yaml)
    start = text.index("  vllm-serving:image:")
    end = text.index("  vllm-serving:", start + 1)
    path.write_text(text[:start] + text[end:])
    assert load_spec(path, "lone", PROJECT_DIR).settings.image.tag == "v0.19.1"


def test_a_syntax_error_at_the_end_of_the_file_names_the_line_after_the_last(tmp_path: Path) -> None:
    """An unclosed `[` is found at the end of the stream: PyYAML's mark is the line after the last
    (0-based 2 of a two-line file), which the tab check must not read past."""
    f = _one(tmp_path, "config:\n  a: [1\n")
    assert (f.code, f.message) == ("stack-file", "is not valid YAML at line 3")


def test_a_file_that_is_not_utf_8_says_so(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_bytes(b"config:\n  a: caf\xe9\n")  # Latin-1, not UTF-8 (YAML 1.1 files are Unicode)
    [f] = _refused(path)
    assert (f.code, f.key, f.message, f.fix) == (
        "stack-file", str(path), "cannot read the file (UnicodeDecodeError)",
        "check the path and that it is a text file")


def test_a_directory_named_like_a_stack_file_is_no_stack_file(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.t.yaml"
    path.mkdir()
    [f] = _refused(path)
    assert (f.code, f.key, f.message, f.fix) == (
        "stack-file", str(path), "is a directory, not a regular file", "name a stack YAML file")


def _promoting(tmp_path: Path, stack: str, source: str, extra: str = "") -> Path:
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text(f"config:\n  vllm-serving:release:\n    promoteFrom: organization/vllm-serving/{source}\n{extra}")
    return path


def test_two_stacks_promoting_from_each_other_are_a_cycle_named_in_the_source(tmp_path: Path) -> None:
    """a promotes from b, b from a: reading a reads b, which would read a again."""
    path = _promoting(tmp_path, "a", "b")
    _promoting(tmp_path, "b", "a")
    [f] = _refused(path)
    assert (f.code, f.key, f.message, f.fix) == (
        "release-cycle", "vllm-serving:release.promoteFrom", "promotion cycle: a -> b -> a [in source stack b]",
        "end the chain at a stack without release.promoteFrom (the one that is verified first)")


def test_a_cycle_is_named_in_the_order_the_stacks_promote(tmp_path: Path) -> None:
    """c promotes from a, a from b, b from a: reading c reads a, b, then a again."""
    path = _promoting(tmp_path, "c", "a")
    _promoting(tmp_path, "a", "b")
    _promoting(tmp_path, "b", "a")
    [f] = _refused(path)
    assert f.message == "promotion cycle: c -> a -> b -> a [in source stack b] [in source stack a]"


def test_a_stack_promoting_from_itself_is_reported_with_its_other_reading_errors(tmp_path: Path) -> None:
    path = _promoting(tmp_path, "s", "s", "  vllm-servng:network: {}\n")
    found = {(f.code, f.key, f.message) for f in _refused(path)}
    assert ("release-cycle", "vllm-serving:release.promoteFrom", "stack s promotes from itself") in found
    assert {code for code, _, _ in found} == {"release-cycle", "config-namespace-misspelt"}


def test_a_stack_file_name_that_is_no_stack_name_is_refused_naming_the_rule(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.bad name.yaml"
    path.write_text("config:\n  a: 1\n")
    [f] = _refused(path)
    assert (f.code, f.key, f.message, f.fix) == (
        "stack-name-invalid", "stack", "'bad name' is not a Pulumi stack name",
        "name the stack with at most 100 letters, digits, '-', '_' and '.' (as Pulumi does), "
        "in a file named Pulumi.<stack>.yaml")


def test_the_stack_named_wins_over_the_file_name(tmp_path: Path) -> None:
    """`vllm-stack check east --file copy.yaml` reads a copy as stack east, not as `copy`."""
    path = tmp_path / "Pulumi.copy.yaml"
    shutil.copy(stack_file("v100"), path)
    assert load_spec(path, "v100-east", PROJECT_DIR).stack == "v100-east"


@pytest.mark.parametrize(("file", "name"), [("staging.yaml", "staging"), ("Pulumi.v100.json", "Pulumi.v100")])
def test_a_file_not_named_pulumi_stack_yaml_is_named_by_its_stem(file: str, name: str) -> None:
    assert stack_name(Path(file)) == name


def test_a_project_config_declaration_without_a_value_sets_no_default(tmp_path: Path) -> None:
    """Pulumi.yaml's `config:` may declare a key (type, description) without a `value:`; only a
    value is a default, namespaced by the project's name when the key has none."""
    (tmp_path / "Pulumi.yaml").write_text(
        "name: proj\nruntime: python\nconfig:\n  note:\n    type: string\n    description: a note\n"
        "  tag:\n    value: v1\n  other:key:\n    value: 2\n")
    assert project_defaults(tmp_path) == {"proj:tag": "v1", "other:key": 2}


def test_a_long_message_keeps_its_first_500_characters_and_says_it_was_cut(tmp_path: Path) -> None:
    """A project deep in the file system: the missing source's message names the directory."""
    project = tmp_path / ("d" * 200) / ("e" * 200) / ("f" * 200)
    project.mkdir(parents=True)
    [f] = _refused(_promoting(project, "a", "b"))
    whole = f"organization/vllm-serving/b: offline views read its release from Pulumi.b.yaml, which is not in {project}"
    assert len(whole) > 500
    assert (f.code, f.message) == ("release-source-missing", whole[:500] + "... (cut)")


def test_a_refusal_quoting_a_pasted_value_is_cut_to_a_readable_length(tmp_path: Path) -> None:
    # a 700-character image tag (a paste gone wrong): the settings' refusal quotes it whole, the loader
    # keeps its first 500 characters - the quote and the tag's first 499 - and says it cut the rest
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    tag = "v" + "9" * 699
    text = stack_file("v100").read_text().replace("    tag: v0.19.1\n", f"    tag: {tag}\n")
    assert tag in text
    (tmp_path / "Pulumi.t.yaml").write_text(text)
    [refused] = _refused(tmp_path / "Pulumi.t.yaml")
    assert refused.key == "vllm-serving:image.tag"
    assert refused.message == "'" + tag[:499] + "... (cut)"
