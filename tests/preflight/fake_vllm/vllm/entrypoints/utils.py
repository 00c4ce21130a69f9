"""cli_env_setup (vllm/entrypoints/utils.py), which `vllm serve` runs before it parses."""

import os


def cli_env_setup():
    if "VLLM_WORKER_MULTIPROC_METHOD" not in os.environ:
        os.environ["VLLM_WORKER_MULTIPROC_METHOD"] = "spawn"
