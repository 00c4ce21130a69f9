"""The preflight program run as a container runs it: `python3 -c PROGRAM ARGS`, in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from vllm_serving.preflight.command import PROGRAM

CONFIG = {"architectures": ["Qwen3_5ForConditionalGeneration"],
          "text_config": {"max_position_embeddings": 262144, "head_dim": 256, "dtype": "bfloat16"}}


def model_dir(path: Path, config: Mapping[str, object] = CONFIG) -> Path:
    """A model directory: config.json (Qwen3.5-27B's limits) and one weight file."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(config))
    (path / "model.safetensors").write_bytes(b"\0" * 1024)
    return path


def run_program(args: Sequence[str], site: Path | None = None, env: Mapping[str, str] | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The program with `args`; `site` (the fake vLLM) on PYTHONPATH, `env` added to the environment."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | dict(env or {})
    if site is not None:
        environment["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, "-c", PROGRAM, *args], capture_output=True, text=True,
                          timeout=timeout, check=False, env=environment)
