"""Run `vllm-stack --project-dir DIR smoke ...` in-process, as the console script does (main's
exit-code policy and error output included)."""

from __future__ import annotations

from pathlib import Path

from vllm_serving.cli import main


def smoke_verb(project: Path, *argv: str) -> int:
    return main(["--project-dir", str(project), "smoke", *argv])
