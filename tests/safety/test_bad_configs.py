"""The bad-input corpus: every file in bad_configs/ is refused by `check` and by the program.

The cases come from bad_configs/CASES.md, one table row per file, so the table and the files
cannot drift apart.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pytest

from tests.paths import PROJECT_DIR, ROOT, stack_file
from tests.pulumi_harness import ProgramFailed, stack_config
from tests.safety.helpers import BAD_CONFIGS, VLLM_STACK
from vllm_serving.cli import main
from vllm_serving.stack_files.namespaces import is_misspelt_project

FILE_KEY = "(file)"
LOADER_MARK = "[loader]"  # refused while the file is read: the program never sees such a config
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\s+File \".*\", line \d+", re.M)
LEAK = "LEAKME"  # plain-text secret values in the corpus start with this


@dataclass(frozen=True)
class Case:
    file: str
    key: str
    fragment: str
    what: str = ""

    @property
    def loader_only(self) -> bool:
        return self.what.startswith(LOADER_MARK)

    @property
    def path(self) -> Path:
        return BAD_CONFIGS / self.file

    @property
    def stack(self) -> str:
        """The stack the file is for, as `check` names it (a promotion from itself shows only so)."""
        return self.file.removeprefix("Pulumi.").removesuffix(".yaml")

    def expected_key(self) -> str:
        """The finding's key: the config key, or the file's path for an unusable file."""
        return str(self.path) if self.key == FILE_KEY else self.key


def read_cases() -> list[Case]:
    """Rows of the table in CASES.md: | input file | config key | expected message fragment | ... |"""
    cases: list[Case] = []
    for line in (BAD_CONFIGS / "CASES.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3 or cells[0] in ("input file", "---"):
            continue
        cases.append(Case(*cells[:4]))
    return cases


CASES = read_cases()
PROGRAM_CASES = [c for c in CASES if c.key != FILE_KEY and not c.loader_only]


def _ids(cases: list[Case]) -> list[str]:
    return [c.file.removeprefix("Pulumi.").removesuffix(".yaml") for c in cases]


def test_table_and_files_agree() -> None:
    files = sorted(p.name for p in BAD_CONFIGS.iterdir() if p.name != "CASES.md")
    listed = [c.file for c in CASES]
    assert sorted(listed) == files, "CASES.md must list every file in bad_configs/ exactly once"
    assert len(CASES) >= 40
    for case in PROGRAM_CASES:
        namespace = case.key.split(":")[0]
        assert namespace == "vllm-serving" or is_misspelt_project(namespace), case


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_check_refuses_with_key_and_fix(case: Case, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--project-dir", str(PROJECT_DIR), "check", "--config-file", str(case.path)])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code == (2 if case.key == FILE_KEY else 1), text  # a file that cannot be read is unusable input
    assert not TRACEBACK.search(text), text
    assert "internal error" not in text, text
    lines = [line for line in text.splitlines() if f" {case.expected_key()}: " in line]
    assert lines, f"no line names {case.expected_key()}:\n{text}"
    assert any(case.fragment in line for line in lines), f"no line has {case.fragment!r}:\n{text}"
    assert LEAK not in text, "a plain-text secret value was echoed back"


@pytest.mark.parametrize("case", PROGRAM_CASES, ids=_ids(PROGRAM_CASES))
def test_program_registers_nothing(case: Case, program: object) -> None:
    config = stack_config(case.path)
    with pytest.raises(ProgramFailed) as failed:
        program(config, stack=case.stack)  # type: ignore[operator]
    assert failed.value.resources == [], [r.name for r in failed.value.resources]
    assert isinstance(failed.value.error, pulumi.RunError), repr(failed.value.error)
    message = str(failed.value)
    assert case.key in message and case.fragment in message, message
    assert LEAK not in message


def test_console_script_end_to_end_has_no_traceback() -> None:
    """The installed `vllm-stack` over the whole corpus at once: exit 2 (some files cannot be read),
    every finding, no traceback."""
    argv = [str(VLLM_STACK), "check"]
    for case in CASES:
        argv += ["--config-file", str(case.path)]
    done = subprocess.run(argv, cwd=PROJECT_DIR, capture_output=True, text=True, check=False, timeout=60)
    text = done.stdout + done.stderr
    assert done.returncode == 2, text
    assert not TRACEBACK.search(text), text
    for case in CASES:
        assert any(f" {case.expected_key()}: " in line for line in text.splitlines()), case.file


@pytest.mark.parametrize("name", ["empty.yaml", "not-yaml.yaml", "no-config.yaml"])
def test_unusable_file_is_one_clear_line(name: str) -> None:
    done = subprocess.run([str(VLLM_STACK), "check", "--config-file", str(BAD_CONFIGS / name)],
                          cwd=PROJECT_DIR, capture_output=True, text=True, check=False, timeout=60)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 2
    assert len([line for line in lines if line.startswith("ERROR")]) == 1, lines
    assert not TRACEBACK.search(done.stdout + done.stderr)


@pytest.mark.parametrize(("section", "key", "value"), [("container", "name", "Vllm_Server"),
                                                       ("model", "volumeName", "Qwen_Weights")])
def test_kubernetes_name_errors_are_caught_before_any_resource(
    tmp_path: Path, program: object, section: str, key: str, value: str
) -> None:
    """Valid Docker names, invalid Kubernetes names, on a Kubernetes stack."""
    import yaml

    data = yaml.safe_load((stack_file("a100-k8s")).read_text())
    data["config"][f"vllm-serving:{section}"][key] = value
    path = tmp_path / "Pulumi.k8s-name.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["--project-dir", str(PROJECT_DIR), "check", "--config-file", str(path)]) == 1
    with pytest.raises(ProgramFailed) as failed:
        program(stack_config(path), stack="bad")  # type: ignore[operator]
    assert failed.value.resources == []
    assert isinstance(failed.value.error, pulumi.RunError)


def test_security_doc_states_the_corpus_size() -> None:
    """docs/security.md promises a number of cases; it is this table's."""
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    assert f"{len(CASES)} cases in" in text
