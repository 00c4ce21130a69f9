"""The smoke results as a table (one row per check, with its time, printed as each finishes) or
as JSON; a Docker fleet's as one block (or JSON object) per host, its hosts checked side by side.
When /health fails, the rest is not run and the report names the command that shows the server's
log (docker logs / kubectl logs)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import msgspec

from vllm_serving.render.rollout_hints import server_logs_command
from vllm_serving.smoke.checks import CHECKS, NOT_RUN, CheckResult, run_checks
from vllm_serving.smoke.expectations import expectations_from_spec

if TYPE_CHECKING:
    from vllm_serving.spec import ServingSpec


def status(result: CheckResult) -> str:
    return "skip" if result.skipped else ("pass" if result.ok else "FAIL")


def passed(results: Sequence[CheckResult]) -> bool:
    return all(r.ok for r in results)


WIDTH = max(len(c.name) for c in CHECKS)


def header(stack: str, base_url: str) -> list[str]:
    return [f"smoke {stack} against {base_url}", f"  {'check':<{WIDTH}}  result  {'time':>7}  detail"]


def row(result: CheckResult) -> str:
    time = "-" if result.skipped else f"{result.seconds:.2f}s"
    return f"  {result.name:<{WIDTH}}  {status(result):<6}  {time:>7}  {result.detail}"


def stopped(results: Sequence[CheckResult]) -> bool:
    """Whether the checks stopped at a failed /health."""
    return any(r.detail == NOT_RUN for r in results)


def footer(results: Sequence[CheckResult], logs_command: str | None) -> list[str]:
    ran = [r for r in results if not r.skipped]
    failed = sum(not r.ok for r in ran)
    lines = [f"  {len(ran) - failed}/{len(ran)} passed" + (f", {failed} failed" if failed else "")]
    if stopped(results):
        lines.append("  the server does not answer /health, so nothing else was checked"
                     + (f"; its log says why: {logs_command}" if logs_command else ""))
    return lines


def table(stack: str, base_url: str, results: Sequence[CheckResult], logs_command: str | None = None) -> str:
    return "\n".join([*header(stack, base_url), *map(row, results), *footer(results, logs_command)])


def as_json(stack: str, base_url: str, results: Sequence[CheckResult], logs_command: str | None = None) -> str:
    doc: dict[str, Any] = {
        "stack": stack,
        "baseUrl": base_url,
        "ok": passed(results),
        "checks": [{"name": r.name, "status": status(r).lower(), "ok": r.ok, "seconds": round(r.seconds, 3),
                    "detail": r.detail} for r in results],
    }
    if stopped(results):
        doc["logsCommand"] = logs_command
    return json.dumps(doc, indent=2)


def smoke_stack(spec: ServingSpec, *, base_url: str, api_key: str | None, timeout: float,
                json_output: bool, emit: Callable[[str], None]) -> bool:
    """Run the checks a stack calls for against `base_url`, `emit`ting the table a row at a time
    as each check finishes (the JSON at the end); whether all passed."""
    logs = server_logs_command(spec)
    if not json_output:
        for line in header(spec.stack, base_url):
            emit(line)
    results = run_checks(base_url, expectations_from_spec(spec), api_key=api_key, timeout=timeout,
                         on_result=None if json_output else (lambda result: emit(row(result))))
    for line in [as_json(spec.stack, base_url, results, logs)] if json_output else footer(results, logs):
        emit(line)
    return passed(results)


class HostResults(msgspec.Struct, frozen=True):
    """One host of a fleet, checked."""

    host: str
    """The host's id (`target.hosts[i].name`, or derived from its dockerHost)."""
    base_url: str
    results: list[CheckResult]


MAX_PARALLEL_HOSTS = 8
"""Hosts checked at once: each waits on its own server's answers, so the fleet takes about as
long as its slowest host, without opening connections to every host of a large fleet at once."""


def fleet_table(stack: str, checked: Sequence[HostResults], logs: dict[str, str]) -> str:
    blocks = [table(f"{stack} host {h.host}", h.base_url, h.results, logs.get(h.host)) for h in checked]
    good = sum(passed(h.results) for h in checked)
    failed = [h.host for h in checked if not passed(h.results)]
    summary = f"{good}/{len(checked)} hosts passed" + (f"; failed: {', '.join(failed)}" if failed else "")
    return "\n\n".join(blocks) + f"\n{summary}"


def fleet_json(stack: str, checked: Sequence[HostResults], logs: dict[str, str]) -> str:
    hosts = [{"host": h.host, **json.loads(as_json(stack, h.base_url, h.results, logs.get(h.host)))}
             for h in checked]
    for host in hosts:
        del host["stack"]
    return json.dumps({"stack": stack, "ok": all(h["ok"] for h in hosts), "hosts": hosts}, indent=2)


def smoke_fleet(spec: ServingSpec, hosts: Sequence[tuple[str, str]], *, api_key: str | None, timeout: float,
                json_output: bool, logs: dict[str, str] | None = None) -> tuple[bool, str]:
    """Run the checks on every (host id, base URL) of a fleet, several hosts at once: (every host
    passed, one table block per host and a summary line, or the JSON), hosts in the order given;
    `logs` is each host's logs command, named for a host whose /health fails."""
    expected = expectations_from_spec(spec)

    def check(host: tuple[str, str]) -> HostResults:
        return HostResults(host[0], host[1], run_checks(host[1], expected, api_key=api_key, timeout=timeout))

    with ThreadPoolExecutor(max_workers=max(1, min(MAX_PARALLEL_HOSTS, len(hosts)))) as pool:
        checked = list(pool.map(check, hosts))
    view = fleet_json if json_output else fleet_table
    return all(passed(h.results) for h in checked), view(spec.stack, checked, logs or {})
