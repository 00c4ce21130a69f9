"""The README and docs/ cannot rot: every `vllm-stack` command in their ```sh blocks runs and exits
as it says, every config key the settings accept is named in docs/configuration.md, and the
figures they quote are the code's.

A command exits 0 unless its trailing comment says `exit N` (`diff` of two different stacks: 1).
Commands run in a copy of the tests' project (tests/fixtures/project/: Pulumi.yaml and the
example stacks), in which every `init` of the pages has run first (README first, then docs/ by
name), as a reader following them would have; an `init` itself runs in a project of its own.
Commands that need a deployed server or the repository's git history are skipped with the reason.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import pytest

from tests.paths import DOCS, FIXTURES, PROJECT_DIR, ROOT, SHIPPED_STACKS, stack_file
from vllm_serving.cli import build_parser, main
from vllm_serving.planner.capacity import plan_capacity
from vllm_serving.render.kubernetes.leader_worker_set import INSTALL_COMMAND
from vllm_serving.settings.base import Section
from vllm_serving.settings.stack import SECRET_KEYS, StackSettings
from vllm_serving.stack_files.loader import load_spec

README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = {"README.md": README, **{f"docs/{p.name}": p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md"))}}
ALL_PAGES = "\n".join(PAGES.values())
CONFIGURATION = PAGES["docs/configuration.md"] + PAGES["docs/kubernetes.md"]  # the table defers to the latter
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
EXIT_NOTE = re.compile(r"\s#.*\bexit (\d+)\b")
SKIPPED = {
    "smoke": "needs a deployed server (it runs after pulumi up)",
    "affected": "needs the repository's git history",
}
# Stands in for the reader's own config.json where a command names one the project lacks.
MODEL_CONFIG = FIXTURES / "hf" / "qwen3-4b.config.json"


@dataclass(frozen=True)
class Command:
    line: str
    argv: tuple[str, ...]
    exit: int

    @property
    def verb(self) -> str:
        return next((word for word in self.argv if not word.startswith("-")), self.argv[0])


def commands_in(text: str) -> list[Command]:
    commands = []
    for block in SH_BLOCK.findall(text):
        for line in re.sub(r"\\\n\s*", "", block).splitlines():
            words = shlex.split(line, comments=True) if "vllm-stack" in line else []
            if "vllm-stack" in words:
                note = EXIT_NOTE.search(line)
                argv = tuple(words[words.index("vllm-stack") + 1:])
                commands.append(Command(line.strip(), argv, int(note[1]) if note else 0))
    return commands


COMMANDS = [c for text in PAGES.values() for c in commands_in(text)]
INITS = [c for c in COMMANDS if c.verb == "init"]
README_VERBS = {c.verb for c in commands_in(README)}

# The examples docs/stacks.md's table describes.
LISTED = re.findall(r"^\| `(Pulumi\.[\w-]+\.yaml)` \|", PAGES["docs/stacks.md"], re.MULTILINE)


def project_copy(where: Path) -> Path:
    """The tests' project: Pulumi.yaml and the copies of the example stacks."""
    where.mkdir(parents=True, exist_ok=True)
    for name in ("Pulumi.yaml", *(f"Pulumi.{stack}.yaml" for stack in SHIPPED_STACKS)):
        shutil.copy(PROJECT_DIR / name, where)
    return where


@contextlib.contextmanager
def inside(project: Path) -> Iterator[None]:
    """Run from the project directory, as the README's reader does (paths are relative to it)."""
    before = Path.cwd()
    os.chdir(project)
    try:
        yield
    finally:
        os.chdir(before)


def run(command: Command, project: Path) -> int:
    argv = list(command.argv)
    if "--model-config" in argv:
        config = project / argv[argv.index("--model-config") + 1]
        if not config.exists():
            config.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(MODEL_CONFIG, config)
    with inside(project):
        try:
            return main(["--project-dir", str(project), *argv])
        except SystemExit as stop:  # --help and --version exit through argparse
            return stop.code if isinstance(stop.code, int) else 0


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project after the pages' `init` commands, in order."""
    project = project_copy(tmp_path_factory.mktemp("readme") / "project")
    for command in INITS:
        assert run(command, project) == command.exit, command.line
    return project


def test_the_stacks_table_lists_the_examples() -> None:
    assert sorted(LISTED) == sorted(f"Pulumi.{name}.yaml" for name in SHIPPED_STACKS)


def test_the_readme_shows_the_first_hour_and_names_every_verb() -> None:
    assert {"gpus", "models", "init", "check", "plan", "capacity", "render", "diff"} <= README_VERBS
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    unnamed = [verb for verb in subparsers.choices if f"vllm-stack {verb}" not in README]
    assert unnamed == [], "a verb the README never mentions"


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c.argv) for c in COMMANDS])
def test_readme_command_exits_as_documented(command: Command, followed: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    if command.verb in SKIPPED:
        pytest.skip(f"{command.line}: {SKIPPED[command.verb]}")
    project = project_copy(tmp_path / "fresh") if command.verb == "init" else followed
    code = run(command, project)
    out, err = capsys.readouterr()
    assert code == command.exit, f"{command.line}\n{out[-2000:]}\n{err[-2000:]}"
    assert out.strip(), f"{command.line} printed nothing"
    assert "internal error" not in err and "Traceback" not in err


def _sections(annotation: Any) -> list[type[Section]]:
    """The settings models a field holds (through Optional, tuple[...], dict[...])."""
    if isinstance(annotation, type) and issubclass(annotation, Section):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _sections(arg)]


def _keys(model: type[Section], path: str) -> Iterator[str]:
    for name, field in model.model_fields.items():
        key = f"{path}.{field.alias or name}"
        yield key
        for nested in _sections(field.annotation):
            if nested.__name__ != "Toleration":  # Kubernetes' own toleration fields, not ours
                yield from _keys(nested, key)


def test_the_configuration_table_names_every_section_and_key() -> None:
    sections = {field.alias or name: _sections(field.annotation)
                for name, field in StackSettings.model_fields.items() if _sections(field.annotation)}
    assert [s for s in sections if f"| `{s}` |" not in CONFIGURATION] == [], "a section without a table row"
    keys = [key for section, (model,) in sections.items() for key in _keys(model, section)]
    unnamed = [key for key in keys
               if not re.search(rf"`[^`\n]*\b{re.escape(key.rsplit('.', 1)[1])}\b[^`\n]*`", CONFIGURATION)]
    assert unnamed == [], "config keys docs/configuration.md never names"
    assert all(f"`{secret}`" in CONFIGURATION for secret in SECRET_KEYS)


def test_the_local_stack_holds_the_requests_the_docs_promise() -> None:
    said = re.search(r"\((\d+) GiB: (\w+) (\d+)-token requests\s+at\s+once", ALL_PAGES)
    assert said, "the local stack's KV cache sentence"
    gib, count, length = int(said[1]), said[2], int(said[3])
    spec = load_spec(stack_file("local"), "local", PROJECT_DIR)
    assert spec.settings.engine.env["VLLM_CPU_KVCACHE_SPACE"] == str(gib)
    assert spec.settings.engine.max_model_len == length
    numbers = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
    assert numbers[int(plan_capacity(spec).max_concurrency) - 1] == count


def test_the_multi_node_install_command_is_the_one_the_program_prints() -> None:
    assert INSTALL_COMMAND in ALL_PAGES


def test_the_error_example_is_what_check_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/configuration.md's example: the `lab` stack of the docs' `init lab`, with '8k' for
    maxModelLen and a misspelt GPU."""
    page = PAGES["docs/configuration.md"]
    example = page[page.index("A wrong config fails"):]
    example = example[example.index("```\n") + 4:]
    example = example[:example.index("```")]
    project = project_copy(tmp_path)
    [lab] = [c for c in INITS if c.argv[1] == "lab"]
    assert run(lab, project) == 0
    stack = project / "Pulumi.lab.yaml"
    text = re.sub(r"maxModelLen: \d+", "maxModelLen: 8k", stack.read_text(encoding="utf-8"))
    stack.write_text(text.replace("gpu: A100-80GB", "gpu: A100-80G"), encoding="utf-8")
    capsys.readouterr()
    assert main(["--project-dir", str(project), "check", "lab"]) == 1
    assert capsys.readouterr().out == example
