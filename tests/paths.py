"""Where the tests find the project: one definition of the repository root and the project name."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository root, which holds Pulumi.yaml and the stack files."""
PROJECT = "vllm-serving"
FIXTURES = ROOT / "tests" / "fixtures"
DOCS = ROOT / "docs"
