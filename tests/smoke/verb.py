"""Run `vllm-stack --project-dir DIR smoke ...` in-process, through the verb's own `register`."""

from __future__ import annotations

import argparse
from pathlib import Path

from vllm_serving.cli import smoke


def smoke_verb(project: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="vllm-stack")
    parser.add_argument("--project-dir", type=Path)
    smoke.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["--project-dir", str(project), "smoke", *argv])
    code: int = args.func(args)
    return code
