"""`vllm-stack calibrate STACK LOG`: the stack's plan beside what a vLLM start-up log printed.

LOG is a file, or `-` for standard input (`docker logs vllm 2>&1 | vllm-stack calibrate v100 -`,
`kubectl logs deploy/vllm | ...`). Every memory term the plan estimates is set beside the
log's figure, predicted with the log's release (the banner) and its eagerness and batch where
it shows them: weights, activation, non-torch, CUDA graphs, the available KV memory (also with
the logged weights, to show the other terms alone), the KV tokens and the concurrency; for a
vision-language model the encoder's dummy batch (budget and items, beside the log's "Encoder
cache will be initialized" line) and what its profiling pass holds.
`--write-case FILE` writes the start-up in the corpus format (tests/fixtures/startup_logs/
README.md), so it can join the logs the error band is measured on.

Exit status: 0 when the available KV memory is within the release's judged error band (or the
log printed none), 1 when it is outside, 2 when the stack or the log cannot be used (a stack with
errors too, as in `diff`: 1 already means something); errors are JSON under `--json` (cli/exits.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from vllm_serving.bounded_read import FileRefused, read_regular_file
from vllm_serving.cli.exits import UNUSABLE, print_error
from vllm_serving.cli.stacks import STACK_HELP, load_stack
from vllm_serving.cli.verbs import verb_help
from vllm_serving.findings import ConfigError
from vllm_serving.planner.calibration import Row, compare, corpus_case, predicted_for_log
from vllm_serving.planner.capacity import spec_inputs
from vllm_serving.planner.startup_log import parse_startup_log

MAX_LOG_BYTES = 64 * 2**20  # a start-up log is megabytes; more is not a start-up log


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "calibrate", help=verb_help("calibrate"),
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stack", metavar="STACK", help=STACK_HELP)
    parser.add_argument("log", metavar="LOG", help="the start-up log: a file, or - for standard input")
    parser.add_argument("--write-case", type=Path, metavar="FILE",
                        help="also write the start-up as a corpus case (YAML) to FILE")
    parser.add_argument("--source-url", default="", metavar="URL",
                        help="where the log is published (the corpus cites every case; https://...)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(func=run)


def _read_log(where: str) -> str:
    if where == "-":
        return sys.stdin.read(MAX_LOG_BYTES)
    # bounded: a FIFO or a device given as LOG would block or never end (`-` is the way to pipe)
    return read_regular_file(Path(where), MAX_LOG_BYTES).decode("utf-8", "replace")


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if unit in ("tokens", "items") else f"{value:.2f}"


def _table(rows: list[Row], header: str) -> str:
    lines = [header, f"  {'term':<30} {'plan':>12} {'logged':>12} {'error':>8}  unit / note"]
    for row in rows:
        error = f"{row.error:+.1%}" if row.error is not None else "-"
        lines.append(f"  {row.term:<30} {_value(row.predicted, row.unit):>12} {_value(row.logged, row.unit):>12} "
                     f"{error:>8}  {row.unit}{'; ' + row.note if row.note else ''}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        spec = load_stack(args.project_dir, args.stack)
    except ConfigError as exc:
        print_error("calibrate", None, args.json, exc.findings)
        return UNUSABLE
    try:
        logged = parse_startup_log(_read_log(args.log))
    except OSError as exc:
        print_error("calibrate", f"cannot read {args.log}: {exc.strerror or exc}", args.json)
        return UNUSABLE
    except FileRefused as exc:
        print_error("calibrate", f"{args.log} {exc.reason}: give the log as a file, or pipe it to - "
                    "(docker logs vllm 2>&1 | vllm-stack calibrate STACK -)", args.json)
        return UNUSABLE
    if logged.available_kv_gib is None and logged.weights_gib is None:
        print_error("calibrate", f"{args.log} has no 'Model loading took' nor 'Available KV cache memory' line: "
                    "give the server's start-up log", args.json)
        return UNUSABLE
    predicted = predicted_for_log(spec_inputs(spec), logged)
    rows = compare(predicted, logged)
    kv = next(row for row in rows if row.term == "available KV")
    outside = kv.error is not None and not (predicted.judged_error >= kv.error >= -predicted.judged_error - 0.03)
    if args.write_case is not None:
        case = corpus_case(spec, predicted, logged, case_id=args.write_case.stem, source_url=args.source_url)
        args.write_case.write_text(yaml.safe_dump(case, sort_keys=False, allow_unicode=True, width=120))
    if args.json:
        table = [{"term": r.term, "plan": r.predicted, "logged": r.logged, "error": r.error, "unit": r.unit,
                  "note": r.note} for r in rows]
        print(json.dumps({"stack": spec.stack, "vllm_version": predicted.vllm_version, "rows": table,
                          "judged_error": predicted.judged_error, "outside_band": outside}, indent=2))
    else:
        header = (f"calibrate {spec.stack} against {args.log}: vLLM v{predicted.vllm_version} "
                  f"({predicted.vllm_version_source}); error = (plan - logged) / logged")
        print(_table(rows, header))
        if kv.error is not None:
            verdict = "outside" if outside else "within"
            print(f"  available KV is {verdict} the band the plan is judged at ({predicted.error_band or 'exact'})")
        if args.write_case is not None:
            print(f"  wrote {args.write_case}: check its assumptions and engine flags, add --source-url, then it "
                  "can join tests/fixtures/startup_logs")
    return 1 if outside else 0
