"""The smoke results as a table (one row per check, with its time) or as JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
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
