"""Every verb's `--json` is one JSON document laid out the same way (two-space indents), so a
reader or a diff of two runs sees the same layout from every verb; `affected`
is the one exception, one line, as `$GITHUB_OUTPUT` takes it (test_affected_cli.py)."""

from __future__ import annotations

import json

import pytest

from tests.paths import PROJECT_DIR
from vllm_serving.cli import main


@pytest.mark.parametrize("argv", [
    ["plan", "v100"], ["check", "v100"], ["capacity", "v100"], ["gpus"], ["models"], ["diff", "v100", "a100"],
], ids=" ".join)
def test_json_is_indented_by_two_spaces(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--project-dir", str(PROJECT_DIR), *argv, "--json"]) in (0, 1)
    out = capsys.readouterr().out
    assert out == json.dumps(json.loads(out), indent=2) + "\n"
