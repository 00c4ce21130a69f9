"""`vllm-stack affected --base REF`: the stacks whose preview the changes since REF can alter.

The rules are in `vllm_serving/views/affected_stacks.py`; this module only asks git. `--json`
prints one line, a JSON list, for a GitHub Actions matrix (`fromJSON`). `--exclude-promoting`
drops the stacks with `release.promoteFrom` (production): the PR preview runs with the staging
environment's credentials, which must never be asked to read a production stack.
`--include-uncommitted` adds what the working tree changes on top of HEAD (staged, unstaged and
new untracked files): what a local `pulumi preview` would run, before anything is committed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from vllm_serving.cli.exits import Unusable
from vllm_serving.cli.verbs import verb_help
from vllm_serving.release.promotion import promote_from
from vllm_serving.settings.text_checks import stack_name_problem
from vllm_serving.stack_files.loader import read_stack_file, stack_path
from vllm_serving.views.affected_stacks import affected_stacks, stack_of


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "affected", help=verb_help("affected"),
        description="Compare HEAD with the merge base of REF (git diff REF...HEAD) and print the "
                    "stacks to preview: all of them when program code or dependencies changed, "
                    "else those whose Pulumi.<stack>.yaml changed. Docs and tests affect none.")
    parser.add_argument("--base", required=True, metavar="REF",
                        help="git ref the change is based on, e.g. origin/main or a commit")
    parser.add_argument("--json", action="store_true",
                        help="print a JSON list (a GitHub Actions matrix via fromJSON)")
    parser.add_argument("--include-uncommitted", action="store_true",
                        help="also count changes not committed yet: staged, unstaged and untracked files")
    parser.add_argument("--exclude-promoting", action="store_true",
                        help="leave out stacks that set release.promoteFrom (production stacks, "
                             "previewed only by the promote workflow)")
    parser.set_defaults(func=run)


def changed_paths(project_dir: Path, base: str) -> list[str]:
    """Paths changed on HEAD's side since the merge base with `base`, relative to project_dir.

    The three-dot range ignores what landed on the base branch meanwhile; `--relative` keeps
    only paths inside the project (which may be a subdirectory of the repository);
    `--no-renames` lists a renamed stack file under its old name too; `-z` avoids quoting.
    """
    return _git_paths(project_dir, "diff", "--name-only", "--no-renames", "--relative", "-z", f"{base}...HEAD", "--")


def uncommitted_paths(project_dir: Path) -> list[str]:
    """Paths the working tree changes on top of HEAD, relative to project_dir: staged and unstaged
    edits and deletions (`git diff HEAD`), and untracked files git does not ignore."""
    changed = _git_paths(project_dir, "diff", "--name-only", "--no-renames", "--relative", "-z", "HEAD", "--")
    # ls-files prints paths relative to its working directory, the project; `.` keeps it inside
    untracked = _git_paths(project_dir, "ls-files", "--others", "--exclude-standard", "-z", "--", ".")
    return list(dict.fromkeys([*changed, *untracked]))


def _git_paths(project_dir: Path, *args: str) -> list[str]:
    done = subprocess.run(["git", *args], cwd=project_dir, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"git exited with {done.returncode}")
    return [path for path in done.stdout.split("\0") if path]


def promotes(project_dir: Path, stack: str) -> bool:
    """Whether the stack file sets `release.promoteFrom`; a bad value is a ConfigError naming it."""
    stack_file = read_stack_file(stack_path(project_dir, stack), project_dir)
    return promote_from(stack_file.values, stack) is not None


def run(args: argparse.Namespace) -> int:
    project: Path = args.project_dir
    if args.base.startswith("-"):  # would reach git as an option
        raise Unusable(f"--base {args.base!r} is not a git ref")
    try:
        changed = changed_paths(project, args.base)
    except (OSError, RuntimeError) as exc:
        raise Unusable(f"git diff {args.base}...HEAD failed: {exc}") from None
    if args.include_uncommitted:
        try:
            changed += uncommitted_paths(project)
        except (OSError, RuntimeError) as exc:
            raise Unusable(f"reading the working tree's changes failed: {exc}") from None
    existing = (stack_of(path.name) for path in project.glob("Pulumi.*.yaml"))
    # a file name that is no stack name (a line break in it would forge a line of the output) is
    # no stack Pulumi could preview
    stacks = affected_stacks(changed, (stack for stack in existing if stack and not stack_name_problem(stack)))
    if args.exclude_promoting:
        stacks = [stack for stack in stacks if not promotes(project, stack)]
    if args.json:
        print(json.dumps(stacks))
    else:
        for stack in stacks:
            print(stack)
        if not stacks:
            since = f"{args.base} (working tree included)" if args.include_uncommitted else args.base
            print(f"vllm-stack: no stack affected since {since}", file=sys.stderr)
    return 0
