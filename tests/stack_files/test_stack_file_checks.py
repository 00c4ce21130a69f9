"""What the stack-file loader refuses beyond YAML itself: keys under a misspelt project namespace
(Pulumi would drop them silently), `secure:` values that are not ciphertext (a secret typed in by
hand), and messages that would quote a whole hostile value. Each through `vllm-stack check`:
exit 1, the key and the fix, no traceback, the secret never echoed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.paths import PROJECT_DIR, stack_file
from tests.safety.helpers import run_cli
from tests.safety.test_bad_configs import CASES, LEAK, TRACEBACK
from vllm_serving.findings import ConfigError
from vllm_serving.stack_files.ciphertext import is_ciphertext
from vllm_serving.stack_files.loader import MAX_MESSAGE_CHARS, read_stack_file
from vllm_serving.stack_files.namespaces import edit_distance, namespace_findings

# Shaped like what Pulumi writes (see vllm_serving/stack_files/ciphertext.py); not real ciphertexts.
PASSPHRASE_CIPHERTEXT = "v1:bm90LWEtbm9uY2Uh:bm90LWEtcmVhbC1jaXBoZXJ0ZXh0LW9yLXRhZw=="
SERVICE_CIPHERTEXT = "AAABAG5vdC1hLW5vbmNlIW5vdC1hLXJlYWwtdGFnISFrZXk="


def _project(tmp_path: Path, extra: str, stack: str = "v100") -> Path:
    """A project whose `stack` file is the shipped one plus `extra` (indented under config:)."""
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    text = (stack_file(stack)).read_text(encoding="utf-8")
    (tmp_path / f"Pulumi.{stack}.yaml").write_text(text + extra, encoding="utf-8")
    return tmp_path


def _check(project: Path, stack: str = "v100") -> tuple[int, list[str]]:
    result = run_cli("--project-dir", str(project), "check", stack)
    assert not TRACEBACK.search(result.text), result.text
    return result.code, result.text.splitlines()


@pytest.mark.parametrize(("a", "b", "distance"), [
    ("vllm-serving", "vllm-serving", 0), ("vllm-servng", "vllm-serving", 1),
    ("vllm_serving", "vllm-serving", 1), ("vllm-serivng", "vllm-serving", 1),
    ("docker", "vllm-serving", 10), ("", "abc", 3),
])
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance


@pytest.mark.parametrize("key", ["vllm-servng:network", "vllm_serving:engine", "VLLM-Serving:image",
                                 "vllm-serivng:model", "vllmserving:hardware", "vlm-serving:apiKey"])
def test_misspelt_namespaces_are_errors_with_the_right_spelling(key: str) -> None:
    [finding] = namespace_findings([key])
    assert finding.key == key and finding.code == "config-namespace-misspelt"
    assert finding.fix == f"rename the key to vllm-serving:{key.split(':', 1)[1]}"


@pytest.mark.parametrize("key", ["vllm-serving:network", "docker:host", "kubernetes:context",
                                 "vllm:engine", "aws:region", "network"])
def test_other_namespaces_pass(key: str) -> None:
    assert namespace_findings([key]) == []


def test_misspelt_namespace_is_reported_with_the_other_errors(tmp_path: Path) -> None:
    """Every error at once: the dropped section and a settings error elsewhere in the file."""
    extra = "  vllm-servng:network:\n    bindAddress: 127.0.0.1\n  vllm-serving:apiKey: LEAKME-plain\n"
    code, lines = _check(_project(tmp_path, extra))
    assert code == 1
    assert any(line.startswith("ERROR config-namespace-misspelt vllm-servng:network: ")
               and line.endswith("- rename the key to vllm-serving:network") for line in lines), lines
    assert any(" vllm-serving:apiKey: " in line for line in lines), lines
    assert not any(LEAK in line for line in lines)


@pytest.mark.parametrize("value", [PASSPHRASE_CIPHERTEXT, SERVICE_CIPHERTEXT])
def test_ciphertexts_as_pulumi_writes_them_pass(tmp_path: Path, value: str) -> None:
    code, lines = _check(_project(tmp_path, f"  vllm-serving:apiKey:\n    secure: {value}\n"))
    assert code == 0, lines


@pytest.mark.parametrize("value", [
    "LEAKME-hunter2",                                   # typed in
    "LEAKMEpassword",                                   # base64 alphabet, 14 characters
    "LEAKMEpasswordLEAKMEpass",                         # valid base64, 18 bytes: too short for a nonce and tag
    "v1:LEAKMEpassword",                                # a v1 prefix, one part
    "v1:bm90LWEtbm9uY2U=:bm90LWEtcmVhbC1jaXBoZXJ0ZXh0",  # an 11-byte nonce
    "v1:bm90LWEtbm9uY2Uh:c2hvcnQ=",                     # ciphertext shorter than the GCM tag
    f"{SERVICE_CIPHERTEXT}\n",                          # what a trailing newline does to base64
    "12345", "", "~",
])
def test_secure_values_that_are_not_ciphertext_are_refused(tmp_path: Path, value: str) -> None:
    extra = f"  vllm-serving:apiKey:\n    secure: {value!r}\n".replace("'", '"')
    code, lines = _check(_project(tmp_path, extra))
    assert code == 1
    [error] = [line for line in lines if line.startswith("ERROR config-secret-not-ciphertext ")]
    assert " vllm-serving:apiKey: " in error
    assert error.endswith("remove the key from the file and run: pulumi config set --secret apiKey")
    assert not any(LEAK in line for line in lines)


def test_passphrase_stacks_accept_only_v1_values() -> None:
    """A stack with `encryptionsalt:` decrypts only `v1:` values; the service form is refused there."""
    assert is_ciphertext(SERVICE_CIPHERTEXT, symmetric_only=False)
    assert not is_ciphertext(SERVICE_CIPHERTEXT, symmetric_only=True)
    assert is_ciphertext(PASSPHRASE_CIPHERTEXT, symmetric_only=True)
    assert not is_ciphertext(None, symmetric_only=False)


def test_passphrase_stack_file_refuses_a_service_ciphertext(tmp_path: Path) -> None:
    project = _project(tmp_path, f"  vllm-serving:apiKey:\n    secure: {SERVICE_CIPHERTEXT}\n")
    path = project / "Pulumi.v100.yaml"
    path.write_text(f"encryptionsalt: {PASSPHRASE_CIPHERTEXT}\n" + path.read_text(encoding="utf-8"))
    code, lines = _check(project)
    assert code == 1 and any(" config-secret-not-ciphertext vllm-serving:apiKey: " in line for line in lines)


def test_nested_secure_value_names_its_path(tmp_path: Path) -> None:
    extra = "  vllm-serving:release:\n    note:\n      secure: LEAKME-nested\n"
    stack_file = read_stack_file(_project(tmp_path, extra) / "Pulumi.v100.yaml", tmp_path)
    [problem] = stack_file.problems
    assert problem.key == "vllm-serving:release.note"
    assert "secrets go in registryPassword, apiKey, hfToken" in problem.fix  # a section holds none
    assert problem.message == ("the `secure:` value is not a ciphertext Pulumi wrote (typed into the file by hand?); "
                               "it is not shown here")


def test_a_huge_bad_value_is_quoted_only_in_part(tmp_path: Path) -> None:
    """A settings error quotes the value it refuses; from a hostile file, never all of it."""
    values = ", ".join(["1"] * 30_000)
    project = _project(tmp_path, "")
    path = project / "Pulumi.v100.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("maxModelLen: ", f"maxModelLen: [{values}] #"))
    code, lines = _check(project)
    assert code == 1
    [line] = [line for line in lines if " vllm-serving:engine.maxModelLen: " in line]
    assert len(line) < MAX_MESSAGE_CHARS + 500, len(line)


@pytest.mark.parametrize("case", [c for c in CASES if c.loader_only], ids=lambda c: c.file)
def test_loader_rows_of_the_corpus_are_refused_by_the_loader(case: object) -> None:
    """A `[loader]` row is skipped by the program case; it must really be the loader that refuses."""
    path, key = case.path, case.key  # type: ignore[attr-defined]
    try:
        problems = read_stack_file(path, PROJECT_DIR).problems
    except ConfigError as exc:
        problems = tuple(exc.findings)
    assert any(p.key == key for p in problems), problems
