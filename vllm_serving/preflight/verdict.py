"""The preflight's result read back from its exit code and output, and the message that stops `pulumi up`."""

from __future__ import annotations

import msgspec

from vllm_serving.findings import config_key
from vllm_serving.preflight.in_image.memory import READINGS
from vllm_serving.preflight.in_image.report import FAILED, PASSED

REPORT_LINES = 40  # of an output that carries no verdict (the script never ran)


class Verdict(msgspec.Struct, frozen=True):
    passed: bool
    report: tuple[str, ...]
    """The script's lines (one per check, a fix under each failure), or the output it left instead."""
    readings: str | None = None
    """The memory check's readings line, where the outgoing server's processes decide (on Docker)."""


def read_verdict(exit_code: int | None, output: str | None) -> Verdict:
    """Passed only with exit code 0 and the script's own `preflight: passed` line."""
    every = tuple(line.rstrip() for line in (output or "").splitlines() if line.strip())
    readings = next((line for line in every if line.startswith(READINGS)), None)
    lines = tuple(line for line in every if not line.startswith(READINGS))
    verdict = [i for i, line in enumerate(lines) if line.startswith((PASSED, FAILED))]
    passed = exit_code == 0 and bool(verdict) and lines[verdict[-1]].startswith(PASSED)
    if not verdict:  # the script did not run to its end: show the tail of what happened instead
        lines = lines[-REPORT_LINES:] or ("(no output)",)
    return Verdict(passed, lines, readings)


def failure_message(where: str, verdict: Verdict, exit_code: int | None, rerun: str) -> str:
    """What failed and the fix, for `pulumi up`; `rerun` runs the preflight again once it is fixed."""
    code = "no exit code" if exit_code is None else f"exit code {exit_code}"
    return "\n".join([
        f"preflight failed {where} ({code}); the running server was left as it is:",
        *(f"  {line}" for line in verdict.report),
        f"once fixed, run it again: {rerun}",
        f"(or skip it: {config_key('preflight', 'enabled')} false)",
    ])
