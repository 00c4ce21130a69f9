"""On Docker, the memory check judged again where the outgoing server's processes are known exactly.

The preflight container cannot tell which GPU processes belong to the server it replaces (NVML
names host PIDs, which it cannot see: vllm_serving/preflight/in_image/memory.py), so where a GPU is
short now it prints its readings. The Pulumi program asks Docker for the host PIDs of that server's
container (`docker top`, components/docker/server_processes.py) and judges the readings again with
exactly those processes' memory counted as released at cut-over; the report's memory lines and its
verdict are replaced by that judgement. Without Docker's answer the check's own verdict stands.
"""

from __future__ import annotations

import re

from vllm_serving.preflight.in_image.memory import from_readings, judge
from vllm_serving.preflight.in_image.report import FAILED, PASSED, CheckFailed
from vllm_serving.preflight.verdict import Verdict

CHECK_LINE = re.compile(r"^(ok|FAIL|skip)\s+(\S+)")
STATUS_WIDTH = 6  # "ok    ", "FAIL  ", "skip  " (in_image/main.py run)
NAME = "memory"


def attributed(verdict: Verdict, server_pids: frozenset[int]) -> Verdict:
    """`verdict` with the memory check judged on its readings, the processes with `server_pids`
    (the outgoing server's, as Docker lists them) released at start and no other."""
    if verdict.readings is None:
        return verdict
    gpus, processes, utilization, source = from_readings(verdict.readings)
    report = list(verdict.report)
    start = next((i for i, line in enumerate(report) if _check(line) == NAME), None)
    if start is None:
        return verdict
    end = next((i for i in range(start + 1, len(report)) if not report[i].startswith(" ")), len(report))
    rest = report[start][STATUS_WIDTH:]
    name_field = rest[:len(rest) - len(rest[len(NAME):].lstrip(" "))]
    try:
        lines = [f"{'ok':<{STATUS_WIDTH}}{name_field}"
                 + judge(gpus, processes, utilization, source, server_pids=server_pids, replacing=True)]
    except CheckFailed as exc:
        indent = " " * (STATUS_WIDTH + len(name_field))
        lines = [f"{'FAIL':<{STATUS_WIDTH}}{name_field}{exc}", *(indent + d for d in exc.details),
                 f"{'':<{STATUS_WIDTH}}fix: {exc.fix}"]
    report[start:end] = lines
    checks = [(status, name) for line in report if (m := CHECK_LINE.match(line)) for status, name in [m.groups()]]
    failed = [name for status, name in checks if status == "FAIL"]
    skipped = [name for status, name in checks if status == "skip"]
    not_run = f", not run: {', '.join(skipped)}" if skipped else ""
    last = next((i for i, line in enumerate(report) if line.startswith((PASSED, FAILED))), len(report))
    report[last:last + 1] = [f"{FAILED} ({', '.join(failed)})" if failed
                             else f"{PASSED} ({len(checks)} checks{not_run})"]
    return Verdict(not failed, tuple(report), verdict.readings)


def _check(line: str) -> str | None:
    found = CHECK_LINE.match(line)
    return found.group(2) if found else None
