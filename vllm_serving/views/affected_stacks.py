"""Which stacks' `pulumi preview` a change can alter, decided from the changed paths alone.

Paths are relative to the project directory (the one holding Pulumi.yaml), as
`git diff --name-only --relative` prints them; committed and uncommitted changes (the working
tree, `--include-uncommitted`) are judged alike. The rules, in order:

1. Program code or the project's dependencies changed (`components/**`, the core in
   `vllm_serving/**` but for the CLI-only folders, `__main__.py`, `Pulumi.yaml`, `pyproject.toml`,
   `uv.lock`): every stack, since one program runs for all. The CLI-only folders
   (`CLI_ONLY_DIRS`) are never imported by the program (a test keeps it so).
2. Otherwise a stack is affected when its own `Pulumi.<stack>.yaml` changed and still exists.
   A deleted stack file has nothing left to preview (retiring a stack is `pulumi stack rm`).
3. Promotion is not followed. A stack whose `release.promoteFrom` names `.../v100-staging`
   reads staging's *deployed* `release` output through a StackReference, not staging's file,
   so editing `Pulumi.v100-staging.yaml` cannot change v100-prod's preview until staging is
   deployed; the promote workflow previews prod at that point.
4. Anything else (docs, tests, CI files, benchmarks) affects no stack.
"""

from __future__ import annotations

from collections.abc import Iterable

# Everything `pulumi preview` executes or installs; a change here can alter any stack.
PROGRAM_FILES = frozenset({"__main__.py", "Pulumi.yaml", "pyproject.toml", "uv.lock"})
PROGRAM_DIRS = ("components/", "vllm_serving/")
# Offline tools only: `pulumi preview` never imports them.
CLI_ONLY_DIRS = ("vllm_serving/cli/", "vllm_serving/views/", "vllm_serving/smoke/", "vllm_serving/scaffold/")


def is_program_path(path: str) -> bool:
    if path.startswith(CLI_ONLY_DIRS):
        return False
    return path in PROGRAM_FILES or path.startswith(PROGRAM_DIRS)


def stack_of(path: str) -> str | None:
    """`Pulumi.v100.yaml` -> `v100`; None for any other path.

    Only top-level files count: Pulumi reads stack files next to Pulumi.yaml, and test
    fixtures named `Pulumi.*.yaml` live in subdirectories.
    """
    if "/" in path or not (path.startswith("Pulumi.") and path.endswith(".yaml")):
        return None
    name = path[len("Pulumi."):-len(".yaml")]
    return name or None  # `Pulumi.yaml` is the project file, not a stack


def affected_stacks(changed: Iterable[str], stacks: Iterable[str]) -> list[str]:
    """Sorted names, among the existing `stacks`, whose preview the `changed` paths can alter."""
    existing = set(stacks)
    paths = list(changed)
    if any(is_program_path(path) for path in paths):
        return sorted(existing)
    return sorted({stack for path in paths if (stack := stack_of(path)) in existing})
