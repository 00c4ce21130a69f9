"""`vllm-stack diff A B`: what replacing stack A's deployment by stack B's changes, offline.

Exit codes follow diff(1): 0 identical, 1 different, 2 when a stack cannot be read or has errors
(there is no deployment to compare; 1 is taken by "different", see cli/exits.py).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from msgspec.structs import replace

from vllm_serving.cli.exits import UNUSABLE, print_error
from vllm_serving.cli.stacks import STACK_HELP, load_stack
from vllm_serving.cli.verbs import verb_help
from vllm_serving.findings import ConfigError, Finding
from vllm_serving.settings.capacity import CapacitySettings
from vllm_serving.spec import ServingSpec
from vllm_serving.views.stack_diff import Change, stack_diff

UNSET = "(unset)"
TITLES = {"gpu": "GPU", "argv": "vllm argv"}
# The capacity figures a reviewer reads, in `vllm-stack capacity`'s words; the planner's other
# fields (each accounting term, block sizes) change with these and are listed under --json only.
CAPACITY_WORDS = {
    "weights_fit": "weights fit",
    "fits_one_request": "a full request fits",
    "fits_pessimistic": "fits at the worst measured error",
    "max_model_len_that_fits": "longest context, tokens",
    "context_limited_by": "longest context limited by",
    "max_concurrency": "requests of max-model-len at once",
    "pessimistic_max_concurrency": "the same at the worst measured error",
    "weights_gib_per_gpu": "weights per GPU, GiB",
    "available_kv_gib": "KV cache per GPU, GiB",
    "kv_cache_tokens": "tokens the KV cache holds",
}
# The facts of another model a reviewer weighs (its kind, size, precision, longest context); the
# other facts (layer counts, head sizes, ...) differ with any other model and are counted only.
MODEL_FACTS_SHOWN = frozenset(f"architecture.{key}" for key in (
    "architecture", "paramsBillion", "quantization", "maxPositionEmbeddings"))
CAPACITY_SETTINGS = frozenset(field.alias or name for name, field in CapacitySettings.model_fields.items())


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "diff", help=verb_help("diff"),
        description="Compare the resolved deployments of two stacks: target, GPU, model, image, "
                    "vLLM flags, env, mounts, ports, network, container, Kubernetes settings, preflight, "
                    "endpoints, capacity, observability and waivers. "
                    "Exit 0 if identical, 1 if they differ, 2 if a stack cannot be read.")
    parser.add_argument("stack_a", metavar="STACK_A", help=f"the stack now: {STACK_HELP}")
    parser.add_argument("stack_b", metavar="STACK_B", help=f"the stack it becomes: {STACK_HELP}")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _value(value: str | None) -> str:
    if value is None:
        return UNSET
    return value or '""'  # an empty value is set, and must not read as unset


def _readable(rows: list[Change]) -> tuple[list[Change], int]:
    """The capacity rows in words (CAPACITY_WORDS, then the stack's own capacity settings, which
    are camelCase), and how many planner fields were left to --json."""
    by_key = {c.key: c for c in rows}
    worded = [replace(by_key[key], key=words) for key, words in CAPACITY_WORDS.items() if key in by_key]
    settings = [c for c in rows if c.key in CAPACITY_SETTINGS]
    return worded + settings, len(rows) - len(worded) - len(settings)


def _shown(section: str, rows: list[Change]) -> tuple[list[Change], str | None]:
    """The rows a reviewer reads, and a line counting the rest (listed under --json): the capacity
    figures in words; of another model, MODEL_FACTS_SHOWN (every fact of the same model, as an
    edited inline architecture, is shown)."""
    if section == "capacity":
        shown, hidden = _readable(rows)
        return shown, f"({hidden} more figures of the estimate change: --json lists them)" if hidden else None
    facts = [c for c in rows if c.key.startswith("architecture.") and c.key not in MODEL_FACTS_SHOWN]
    if section == "model" and facts and any(c.key == "name" for c in rows):
        return ([c for c in rows if c not in facts],
                f"({len(facts)} more architecture {'fact differs' if len(facts) == 1 else 'facts differ'} "
                "with the model: --json lists them)")
    return rows, None


def _text(a: str, b: str, changes: list[Change]) -> str:
    if not changes:
        return f"{a} and {b} resolve to the same deployment"
    lines = [f"{a} -> {b}"]
    for section in dict.fromkeys(c.section for c in changes):
        rows, rest = _shown(section, [c for c in changes if c.section == section])
        width = max((len(c.key) for c in rows), default=0) + 2  # per section: a long mount path widens its own
        lines.append(f"  {TITLES.get(section, section)}")
        lines += [f"    {c.key:<{width}}{_value(c.a)} -> {_value(c.b)}" for c in rows]
        if rest:
            lines.append(f"    {rest}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    specs: list[ServingSpec] = []
    failed: list[Finding] = []
    # Read both before giving up, so one run names every stack that cannot be read.
    for name in (args.stack_a, args.stack_b):
        try:
            specs.append(load_stack(args.project_dir, name))
        except ConfigError as exc:
            failed += exc.findings
    if failed:
        # Handled here, not by main(): diff(1) reserves 1 for "different", so trouble is 2.
        print_error("diff", None, args.json, failed)
        return UNUSABLE
    changes = stack_diff(specs[0], specs[1])
    a, b = specs[0].stack, specs[1].stack  # `v100` for Pulumi.v100.yaml given by path too
    if args.json:
        print(json.dumps({"a": a, "b": b, "identical": not changes,
                          "changes": [c.as_dict() for c in changes]}, indent=2))
    else:
        print(_text(a, b, changes))
    return 1 if changes else 0
