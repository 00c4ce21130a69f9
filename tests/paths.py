"""Where the tests find the project: one definition of the repository root and the project name."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository root, which holds Pulumi.yaml and the stack files."""
PROJECT = "vllm-serving"
FIXTURES = ROOT / "tests" / "fixtures"
DOCS = ROOT / "docs"
SHIPPED_STACKS = ("a100", "a100-k8s", "local", "v100", "v100-prod", "v100-staging")
"""The stack files the repository ships (tests/test_paths.py keeps this equal to what git tracks):
a stack a user writes into their clone (`vllm-stack init`) must not change what the tests cover."""
SHIPPED_STACK_FILES = tuple(ROOT / f"Pulumi.{name}.yaml" for name in SHIPPED_STACKS)
