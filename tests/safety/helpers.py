"""Shared pieces of the safety tests: the shipped stacks, the CLI in-process, sentinel secrets."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.paths import SHIPPED_STACK_FILES
from vllm_serving.cli import main

BAD_CONFIGS = Path(__file__).resolve().parent / "bad_configs"
VLLM_STACK = Path(sys.executable).parent / "vllm-stack"

# Recognisable values for every secret the config accepts (settings.SECRET_KEYS).
SENTINELS: dict[str, str] = {
    "registryPassword": "SENTINEL-registry-pw-91c2",
    "apiKey": "SENTINEL-api-key-4e7d",
    "hfToken": "SENTINEL-hf-token-0b5a",
}


def stack_files() -> list[Path]:
    """Every stack file in the repository root."""
    return list(SHIPPED_STACK_FILES)


def stack_kind(path: Path) -> str:
    """`target.kind` of a stack file (docker when absent)."""
    config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
    target = config.get("vllm-serving:target") or {}
    return str(target.get("kind", "docker"))


def stacks_of_kind(kind: str) -> list[str]:
    """Stack names whose target is `kind`."""
    return [p.name.split(".", 1)[1].rsplit(".", 1)[0] for p in stack_files() if stack_kind(p) == kind]


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_cli(*argv: str, env: dict[str, str] | None = None) -> CliResult:
    """`vllm-stack ARGV` in-process; any exception other than SystemExit propagates (a traceback)."""
    out, err = io.StringIO(), io.StringIO()
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exc:  # argparse errors
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return CliResult(code, out.getvalue(), err.getvalue())


def mapping_reversed(value: Any) -> Any:
    """The same config with every mapping's key order reversed (lists untouched)."""
    if isinstance(value, dict):
        return {k: mapping_reversed(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [mapping_reversed(v) for v in value]
    return value
