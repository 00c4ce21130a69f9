"""Boundary cases: each rule's failing stack beside a passing twin one step away.

A case edits a shipped stack (`edit`: `model_copy` per section, so values the settings would
refuse can be fed to the rules directly); `gpu` swaps in a GPU spec outside the catalog. The
twin differs from the failing stack by the smallest step that flips the rule: the nearest GPU,
value or layer count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from tests.stack_builders import edit, shipped_settings, spec_of
from vllm_serving import rules
from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.findings import Finding

Edits = dict[str, Any]
UNFILLED = re.compile(r"\{[a-z_]*\}")  # a template field the facts did not fill


@dataclass(frozen=True)
class Boundary:
    code: str
    stack: str
    trip: Edits
    twin: Edits
    step: str
    """What separates the two, e.g. `V100 (7.0) -> T4 (7.5)`: the test id."""
    key: str | None = None
    """The key the finding must name when it is not the rule's own."""
    says: tuple[str, ...] = field(default=())
    """Text the finding's `message - fix` must contain."""
    lacks: tuple[str, ...] = field(default=())
    """Text it must not contain."""
    fix: str | None = None
    """The exact fix, where the whole list it offers matters."""

    @property
    def id(self) -> str:
        return f"{self.code}: {self.step}"


def findings(stack: str, edits: Edits) -> list[Finding]:
    """rules.check over a shipped stack with `edits` applied (`gpu`: a GpuSpec to run on)."""
    edits = dict(edits)
    gpu: GpuSpec | None = edits.pop("gpu", None)
    spec = spec_of(edit(shipped_settings(stack), **edits))
    if gpu is not None:
        spec = msgspec.structs.replace(spec, gpu=gpu)
    return rules.check(spec)


def codes(stack: str, edits: Edits) -> set[str]:
    return {f.code for f in findings(stack, edits)}


def check_boundary(case: Boundary) -> None:
    rule = rules.RULES_BY_CODE[case.code]
    hits = [f for f in findings(case.stack, case.trip) if f.code == case.code]
    assert len(hits) == 1, f"{case.code} did not trip on {case.trip}"
    hit = hits[0]
    assert hit.severity == rule.severity
    assert hit.key == (case.key or rule.key)
    assert hit.message and hit.fix and not UNFILLED.search(hit.message + hit.fix)
    text = hit.message + " - " + hit.fix
    assert [s for s in case.says if s not in text] == [], text
    assert [s for s in case.lacks if s in text] == [], text
    assert case.fix is None or hit.fix == case.fix
    assert case.code not in codes(case.stack, case.twin), f"{case.code} tripped on the twin {case.twin}"


def gpu(name: str, cc: tuple[int, int], mib: int = 81920, label: str | None = None,
        cuda_total_gib: float | None = None) -> GpuSpec:
    """A GPU outside the catalog, for boundaries no catalog GPU sits on."""
    return GpuSpec(name=name, compute_capability=cc, memory_mib=mib, product_label=label or f"NVIDIA-{name}",
                   architecture="test", cuda_total_gib=cuda_total_gib)
