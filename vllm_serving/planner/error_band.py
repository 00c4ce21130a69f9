"""How far the estimate has been from what vLLM logged, per release: the error band the plan
shows and judges by.

`error_band.json` is written from the start-up log corpus (tests/fixtures/startup_logs, the
in-scope cases) by `tools/error_band/write.py`; a test keeps it equal to the corpus. The band
shown is the release's own logs'; the plan is judged by it only when at least `MIN_CASES` logs
back it, else by the wider of it and every release's band together (a few logs of one release
prove little). Errors are (estimate - logged) / logged: positive is optimistic (vLLM found less
memory than estimated).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

import msgspec

MIN_CASES = 5
ALL = "all"


class ErrorBand(msgspec.Struct, frozen=True):
    releases: str
    """The minor release the band is measured on (`0.19`), or `all` releases together."""
    cases: int
    most_optimistic: float
    """The largest (estimate - logged) / logged seen, at least 0."""
    most_pessimistic: float
    """The most negative error seen, at most 0."""
    median_abs: float
    judged_optimistic: float
    """The error the plan is judged at: this band's, or all releases' where this one has few logs."""

    def pessimistic(self, estimate_gib: float) -> float:
        """The least vLLM would log for this estimate if it erred as the worst judged case did."""
        return estimate_gib / (1 + self.judged_optimistic) if estimate_gib > 0 else estimate_gib

    def words(self) -> str:
        """`v0.19: -0.2% to +0.0% over 1 log; judged at +2.3% (all releases: few logs of this one)`."""
        if not self.cases:
            return f"no log of v{self.releases} yet; judged at all releases' {self.judged_optimistic:+.1%}"
        own = (f"v{self.releases}: {self.most_pessimistic:+.1%} to {self.most_optimistic:+.1%} over "
               f"{self.cases} log{'s' if self.cases != 1 else ''}")
        if self.judged_optimistic == self.most_optimistic:
            return own
        return f"{own}; judged at {self.judged_optimistic:+.1%} (all releases: few logs of this one)"


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def compute_bands(errors: Iterable[tuple[str, float]]) -> dict[str, dict[str, Any]]:
    """(vLLM version, error) of each in-scope case -> the JSON the band file holds."""
    by_minor: dict[str, list[float]] = {}
    for version, error in errors:
        by_minor.setdefault(minor(version), []).append(error)
        by_minor.setdefault(ALL, []).append(error)

    def band(found: list[float]) -> dict[str, Any]:
        return {"cases": len(found), "most_optimistic": round(max(0.0, *found), 4),
                "most_pessimistic": round(min(0.0, *found), 4),
                "median_abs": round(statistics.median(abs(e) for e in found), 4)}

    return {name: band(found) for name, found in sorted(by_minor.items())}


@cache
def _bands() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads(
        resources.files(__package__).joinpath("error_band.json").read_text())["bands"]
    return data


def band_for(vllm_version: str) -> ErrorBand:
    """The band of the release's own logs, judged with all releases' where it has few."""
    bands = _bands()
    name = minor(vllm_version)
    own = bands.get(name) or {"cases": 0, "most_optimistic": 0.0, "most_pessimistic": 0.0, "median_abs": 0.0}
    judged = float(own["most_optimistic"])
    if own["cases"] < MIN_CASES:
        judged = max(judged, float(bands[ALL]["most_optimistic"]))
    return ErrorBand(name, int(own["cases"]), float(own["most_optimistic"]), float(own["most_pessimistic"]),
                     float(own["median_abs"]), judged)
