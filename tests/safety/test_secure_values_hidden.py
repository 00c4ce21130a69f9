"""No value under a key that holds `{secure: ...}` is quoted in any output of any verb: a secret
typed by hand under a section key, in a list, beside other keys, or in Pulumi.yaml's defaults."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.cli import main

LEAK = "hunter2-LEAKED-VALUE"
PLACES = {
    "under a section key": ("  vllm-serving:engine:\n",
                            f"  vllm-serving:engine:\n    maxNumSeqs:\n      secure: {LEAK}\n"),
    "in a list": ("  vllm-serving:engine:\n", f"  vllm-serving:engine:\n    extraArgs: [{{secure: {LEAK}}}]\n"),
    "beside other keys": ("  vllm-serving:engine:\n",
                          f"  vllm-serving:engine:\n    env: {{HF_HOME: {{secure: {LEAK}, x: 1}}}}\n"),
    "as a whole section": ("  vllm-serving:network:\n", f"  vllm-serving:network:\n    secure: {LEAK}\n"
                                                         "  vllm-serving:old-network:\n"),
    "in a ciphertext-shaped value": ("  vllm-serving:engine:\n",
                                     f"  vllm-serving:engine:\n    maxNumSeqs:\n      secure: v1:{LEAK}:{LEAK}\n"),
}
VERBS = [["check", "s"], ["check", "s", "--json"], ["plan", "s"], ["plan", "s", "--json"], ["render", "s"],
         ["render", "s", "--format", "k8s"], ["render", "s", "--format", "alerts"], ["diff", "s", "v100"],
         ["diff", "s", "v100", "--json"], ["capacity", "s"]]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    shutil.copy(stack_file("v100"), tmp_path)
    return tmp_path


@pytest.mark.parametrize("place", PLACES)
def test_no_verb_prints_a_secure_value(project: Path, place: str, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = PLACES[place]
    text = (stack_file("v100")).read_text(encoding="utf-8")
    assert old in text
    (project / "Pulumi.s.yaml").write_text(text.replace(old, new, 1))
    codes = set()
    for verb in VERBS:
        codes.add(main(["--project-dir", str(project), *verb]))
        out = capsys.readouterr()
        assert LEAK not in out.out + out.err and LEAK[:8] not in out.out + out.err, verb
    assert 1 in codes  # refused somewhere, with a finding that names the key


def test_a_secret_in_the_project_defaults_is_never_shown(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pulumi_yaml = project / "Pulumi.yaml"
    pulumi_yaml.write_text(pulumi_yaml.read_text() + f"  vllm-serving:engine:\n    value:\n      maxNumSeqs:\n"
                                                    f"        secure: {LEAK}\n")
    for verb in (["check", "v100"], ["plan", "v100"], ["render", "v100"]):
        main(["--project-dir", str(project), *verb])
        out = capsys.readouterr()
        assert LEAK[:8] not in out.out + out.err, verb


def test_a_section_holding_a_secret_is_refused_by_name(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = PLACES["under a section key"]
    (project / "Pulumi.s.yaml").write_text((stack_file("v100")).read_text().replace(old, new, 1))
    assert main(["--project-dir", str(project), "check", "s"]) == 1
    out = capsys.readouterr().out
    assert "ERROR config-secret-in-section vllm-serving:engine: " in out
    assert "ERROR config-secret-not-ciphertext vllm-serving:engine.maxNumSeqs: " in out
