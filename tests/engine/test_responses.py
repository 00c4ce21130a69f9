"""Where a chat completion carries the reasoning, per release: the table in engine/responses.py
against vLLM's own ChatMessage, vendored from each release's wheel (tests/fixtures/vllm_chat_message/),
and what `init` writes next to engine.reasoningParser."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from tests.paths import FIXTURES, PROJECT_DIR
from vllm_serving.cli import main
from vllm_serving.engine.responses import reasoning_fields

VENDORED = sorted((FIXTURES / "vllm_chat_message").glob("v*.py.txt"))


def _message_fields(path: Path) -> set[str]:
    """The reasoning fields vLLM's ChatMessage declares in that release's source."""
    [cls] = [n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.ClassDef)]
    return {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            and n.target.id.startswith("reasoning")}


@pytest.mark.parametrize("path", VENDORED, ids=lambda p: p.name.removesuffix(".py.txt"))
def test_the_table_names_the_fields_the_release_declares(path: Path) -> None:
    version = tuple(int(part) for part in path.name.removeprefix("v").removesuffix(".py.txt").split("."))
    assert len(version) == 3
    assert set(reasoning_fields(version)) == _message_fields(path)  # type: ignore[arg-type]


def test_the_vendored_releases_span_each_change() -> None:
    assert {p.name for p in VENDORED} >= {"v0.10.2.py.txt", "v0.11.2.py.txt", "v0.15.1.py.txt",
                                          "v0.16.0.py.txt", "v0.19.1.py.txt"}


@pytest.mark.parametrize(("tag", "says", "never"), [
    ("v0.19.1", "in message.reasoning with v0.19.1", "reasoning_content"),
    ("v0.10.2", "in message.reasoning_content with v0.10.2", "message.reasoning "),
])
def test_init_says_where_the_reasoning_arrives(tmp_path: Path, tag: str, says: str, never: str) -> None:
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path)
    assert main(["--project-dir", str(tmp_path), "init", "r", "--gpu", "A100-80GB", "--count", "1",
                 "--model", "Qwen3-8B", "--tag", tag]) == 0
    text = " ".join((tmp_path / "Pulumi.r.yaml").read_text().replace("#", "").split())
    assert says in text and never not in text
