"""What docs/cli.md says `init --model-config` does with a file outside the project is what it does:
each `~/Downloads/...` example is copied where the page says, and the stack names that copy."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.cli.test_init import QWEN3_4B, init
from tests.paths import DOCS

PAGE = " ".join((DOCS / "cli.md").read_text(encoding="utf-8").split())
COPIES = re.findall(r"`~/Downloads/([^`]+)`(?: is copied)? to `(models/[^`]+)`", PAGE)


def test_the_page_gives_both_kinds_of_file() -> None:
    assert {Path(source).name == "config.json" for source, _ in COPIES} == {True, False}


@pytest.mark.parametrize(("source", "target"), COPIES)
def test_a_config_from_outside_is_copied_where_the_page_says(
        empty_project: Path, tmp_path_factory: pytest.TempPathFactory, source: str, target: str) -> None:
    downloads = tmp_path_factory.mktemp("Downloads")
    (downloads / source).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(QWEN3_4B, downloads / source)
    assert init(empty_project, "own", "--gpu", "L4", "--count", "1", "--model-config", str(downloads / source)) == 0
    assert (empty_project / target).read_bytes() == QWEN3_4B.read_bytes()
    model = yaml.safe_load((empty_project / "Pulumi.own.yaml").read_text())["config"]["vllm-serving:model"]
    assert model["configFile"] == target
