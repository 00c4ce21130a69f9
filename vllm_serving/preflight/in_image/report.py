"""What a check reports: one line per check (`ok`, `FAIL` or `skip`), the lines that detail a
failure, a `fix:` line under it, then the verdict."""

from __future__ import annotations

from collections.abc import Sequence

PASSED = "preflight: passed"
FAILED = "preflight: FAILED"
GIB = 2**30


class CheckFailed(Exception):
    """What the check found wrong (one line), what details it, and a fix when the check's own
    fix line does not fit the case."""

    def __init__(self, message: str, details: Sequence[str] = (), fix: str | None = None) -> None:
        super().__init__(message)
        self.details = tuple(details)
        self.fix = fix


class CheckSkipped(Exception):
    """Why the check could not run here; reported, never a failure: the preflight guards against
    what would stop the server, and a question it cannot ask is not an answer."""


def gib(size: float) -> str:
    """GiB with two decimals, as vLLM prints memory (`format_gib`, vllm/utils/mem_utils.py)."""
    return f"{size / GIB:.2f}"


def few(names: Sequence[str], listed: int = 5) -> str:
    """The first names of a long list, and how many more."""
    shown = ", ".join(sorted(names)[:listed])
    return shown + (f" and {len(names) - listed} more" if len(names) > listed else "")
