"""`vllm-stack check`: the compatibility rules over stack files, one finding per line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from vllm_serving import rules
from vllm_serving.cli.exits import FINDINGS, OK, UNUSABLE, Unusable, unreadable
from vllm_serving.cli.stacks import STACK_HELP, stack_findings, stack_target
from vllm_serving.cli.verbs import verb_help
from vllm_serving.findings import ConfigError, Finding, tally
from vllm_serving.stack_files.loader import list_stacks, load_spec, stack_name, stack_path


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check", help=verb_help("check"),
        description="Check every stack in the project directory, the named stacks, or stack "
                    "files by path. Prints `SEVERITY CODE key: message - fix` per finding.")
    parser.add_argument("stacks", nargs="*", metavar="STACK", help=STACK_HELP)
    parser.add_argument("--config-file", action="append", type=Path, default=[], metavar="PATH",
                        help="a stack YAML file to check (repeatable)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def _targets(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(stack name, file) for each stack to check, in the order given."""
    project: Path = args.project_dir
    targets = [stack_target(project, item) for item in args.stacks]
    targets += [(stack_name(path), path) for path in args.config_file]
    if not args.stacks and not args.config_file:
        targets = [(name, stack_path(project, name)) for name in list_stacks(project)]
    return targets


def check_stack(stack: str, path: Path, project_dir: Path | None = None) -> list[Finding]:
    """Findings of one stack file, all at once: configuration errors, and what the catalogs and
    the rules say about the rest of the stack."""
    project = project_dir or path.parent
    try:
        return rules.check(load_spec(path, stack, project))
    except ConfigError as exc:
        return stack_findings(stack, path, project, list(exc.findings))


def print_results(results: list[tuple[str, list[Finding]]], as_json: bool) -> bool:
    """Print each stack's findings (text or JSON); True when any is an error no waiver sets aside."""
    if as_json:
        print(json.dumps([{"stack": stack, "findings": [f.as_dict() for f in findings]}
                          for stack, findings in results], indent=2))
    else:
        for stack, findings in results:
            print(f"== {stack} ==")
            for finding in findings:
                print(finding.line())
            if not findings:
                print("ok: no findings")
        print(f"{len(results)} stack(s): {tally(f for _, fs in results for f in fs)}")
    return any(f.blocks for _, findings in results for f in findings)


def run(args: argparse.Namespace) -> int:
    targets = _targets(args)
    if not targets:
        raise Unusable(f"no Pulumi.<stack>.yaml in {args.project_dir}: write one with "
                       "vllm-stack init NAME --gpu GPU --count N --model MODEL, or pass --project-dir")
    # Project defaults (Pulumi.yaml) apply to files given by path too, as with
    # `pulumi preview --config-file PATH` run in the project.
    results = [(stack, check_stack(stack, path, args.project_dir)) for stack, path in targets]
    failed = print_results(results, args.json)
    if any(unreadable(findings) for _, findings in results):
        return UNUSABLE
    return FINDINGS if failed else OK
