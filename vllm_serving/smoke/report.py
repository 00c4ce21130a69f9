"""The smoke results as a table (one row per check, with its time) or as JSON; a Docker fleet's
as one block (or JSON object) per host, its hosts checked side by side."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vllm_serving.smoke.checks import CheckResult, run_checks
from vllm_serving.smoke.expectations import expectations_from_spec

if TYPE_CHECKING:
    from vllm_serving.spec import ServingSpec


def status(result: CheckResult) -> str:
    return "skip" if result.skipped else ("pass" if result.ok else "FAIL")


def passed(results: Sequence[CheckResult]) -> bool:
    return all(r.ok for r in results)


def table(stack: str, base_url: str, results: Sequence[CheckResult]) -> str:
    width = max(len(r.name) for r in results)
    ran = [r for r in results if not r.skipped]
    lines = [f"smoke {stack} against {base_url}", f"  {'check':<{width}}  result  {'time':>7}  detail"]
    lines += [f"  {r.name:<{width}}  {status(r):<6}  {'-' if r.skipped else f'{r.seconds:.2f}s':>7}  {r.detail}"
              for r in results]
    failed = sum(not r.ok for r in ran)
    lines.append(f"  {len(ran) - failed}/{len(ran)} passed" + (f", {failed} failed" if failed else ""))
    return "\n".join(lines)


def as_json(stack: str, base_url: str, results: Sequence[CheckResult]) -> str:
    doc: dict[str, Any] = {
        "stack": stack,
        "baseUrl": base_url,
        "ok": passed(results),
        "checks": [{"name": r.name, "status": status(r).lower(), "ok": r.ok, "seconds": round(r.seconds, 3),
                    "detail": r.detail} for r in results],
    }
    return json.dumps(doc, indent=2)


def smoke_stack(spec: ServingSpec, *, base_url: str, api_key: str | None, timeout: float,
                json_output: bool) -> tuple[bool, str]:
    """Run the checks a stack calls for against `base_url`: (all passed, the table or the JSON)."""
    results = run_checks(base_url, expectations_from_spec(spec), api_key=api_key, timeout=timeout)
    view = as_json if json_output else table
    return passed(results), view(spec.stack, base_url, results)


@dataclass(frozen=True)
class HostResults:
    """One host of a fleet, checked."""

    host: str
    """The host's id (`target.hosts[i].name`, or derived from its dockerHost)."""
    base_url: str
    results: list[CheckResult]


MAX_PARALLEL_HOSTS = 8
"""Hosts checked at once: each waits on its own server's answers, so the fleet takes about as
long as its slowest host, without opening connections to every host of a large fleet at once."""


def fleet_table(stack: str, checked: Sequence[HostResults]) -> str:
    blocks = [table(f"{stack} host {h.host}", h.base_url, h.results) for h in checked]
    good = sum(passed(h.results) for h in checked)
    failed = [h.host for h in checked if not passed(h.results)]
    summary = f"{good}/{len(checked)} hosts passed" + (f"; failed: {', '.join(failed)}" if failed else "")
    return "\n\n".join(blocks) + f"\n{summary}"


def fleet_json(stack: str, checked: Sequence[HostResults]) -> str:
    hosts = [{"host": h.host, **json.loads(as_json(stack, h.base_url, h.results))} for h in checked]
    for host in hosts:
        del host["stack"]
    return json.dumps({"stack": stack, "ok": all(h["ok"] for h in hosts), "hosts": hosts}, indent=2)


def smoke_fleet(spec: ServingSpec, hosts: Sequence[tuple[str, str]], *, api_key: str | None, timeout: float,
                json_output: bool) -> tuple[bool, str]:
    """Run the checks on every (host id, base URL) of a fleet, several hosts at once: (every host
    passed, one table block per host and a summary line, or the JSON), hosts in the order given."""
    expected = expectations_from_spec(spec)

    def check(host: tuple[str, str]) -> HostResults:
        return HostResults(host[0], host[1], run_checks(host[1], expected, api_key=api_key, timeout=timeout))

    with ThreadPoolExecutor(max_workers=max(1, min(MAX_PARALLEL_HOSTS, len(hosts)))) as pool:
        checked = list(pool.map(check, hosts))
    view = fleet_json if json_output else fleet_table
    return all(passed(h.results) for h in checked), view(spec.stack, checked)
