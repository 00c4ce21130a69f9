"""Where the tests find the project: one definition of the repository root, the project name and
the project the tests read stacks from.

The `Pulumi.*.yaml` files at the repository root are examples a user edits (the README says to set
`model.hostPath` in `Pulumi.local.yaml`) or replaces with their own. Tests never read them: they
read their own copies in PROJECT_DIR, with their own golden outputs, so an edited example never
breaks `make test` (tests/conftest.py refuses, in-process, any open of a root stack file).
`make check` (and CI) checks the examples themselves.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
"""The repository root: Pulumi.yaml, the example stacks, README.md, docs/."""
PROJECT = "vllm-serving"
FIXTURES = ROOT / "tests" / "fixtures"
DOCS = ROOT / "docs"
PROJECT_DIR = FIXTURES / "project"
"""The tests' project directory (`--project-dir`): Pulumi.yaml and a copy of each example stack,
as they were when the golden outputs in tests/fixtures/cli_outputs/ were captured."""
SHIPPED_STACKS = ("a100", "a100-k8s", "local", "v100", "v100-prod", "v100-staging")
"""The stacks the tests cover: copies of the examples the repository ships, in PROJECT_DIR (a
stack a user adds to or edits in their clone changes nothing the tests cover)."""


def stack_file(stack: str) -> Path:
    """The tests' copy of an example stack: `stack_file("v100")` is PROJECT_DIR/Pulumi.v100.yaml."""
    return PROJECT_DIR / f"Pulumi.{stack}.yaml"


SHIPPED_STACK_FILES = tuple(stack_file(name) for name in SHIPPED_STACKS)


def is_example_stack(path: str) -> bool:
    """A stack file at the repository root (`ROOT/Pulumi.<stack>.yaml`): an example, or the user's."""
    parent, _, name = path.rpartition("/")
    return parent == str(ROOT) and name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")) \
        and name not in ("Pulumi.yaml", "Pulumi.yml")
