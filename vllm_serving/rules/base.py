"""What a rule is: a row of data (code, severity, key, message, fix, docs) plus one predicate.

A predicate returns None when the stack passes, or the facts (a mapping) that fill the
message and fix templates when it trips. Predicates read a `Context`: the resolved spec plus
the derived facts several rules share (compute dtype, quantization, capacity plan, version).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property

from vllm_serving.findings import Finding, Severity
from vllm_serving.planner.capacity import CapacityPlan, compute_dtype, parse_vllm_version, plan_capacity
from vllm_serving.settings import EngineSettings
from vllm_serving.spec import ServingSpec

Facts = Mapping[str, object]
FP8_KV = ("fp8", "fp8_e4m3", "fp8_e5m2")


class Context:
    """One stack as the rules see it; derived facts are computed once and shared."""

    def __init__(self, spec: ServingSpec) -> None:
        self.spec = spec
        self.settings = spec.settings
        self.engine: EngineSettings = spec.settings.engine
        self.gpu = spec.gpu
        self.model = spec.model

    @property
    def tp(self) -> int:
        return self.engine.tensor_parallel_size or 1

    @property
    def pp(self) -> int:
        return self.engine.pipeline_parallel_size or 1

    @property
    def cc(self) -> str:
        return f"{self.gpu.compute_capability[0]}.{self.gpu.compute_capability[1]}"

    @cached_property
    def compute_dtype(self) -> str:
        return compute_dtype(self.model, self.gpu, self.engine.dtype)

    @property
    def quantization(self) -> str | None:
        """`--quantization` if forced, else the checkpoint's own method."""
        return self.engine.quantization or self.model.quantization

    @property
    def fp8_weights(self) -> bool:
        return self.model.is_fp8 or self.engine.quantization == "fp8"

    @property
    def fp8_kv(self) -> bool:
        return self.engine.kv_cache_dtype in FP8_KV

    @cached_property
    def vllm_version(self) -> tuple[int, int, int] | None:
        return parse_vllm_version(self.settings.image.tag)

    @cached_property
    def plan(self) -> CapacityPlan:
        return plan_capacity(self.spec)


Predicate = Callable[[Context], Facts | None]


@dataclass(frozen=True)
class Rule:
    """One compatibility rule: data for the finding and the docs, and the predicate."""

    code: str
    """Stable kebab-case identifier, e.g. `dtype-bf16-unsupported`."""
    severity: Severity
    key: str
    """Full config key the finding names, from `findings.config_key`."""
    message: str
    """What is wrong; a `str.format` template over the predicate's facts."""
    fix: str
    """What to change; a template too."""
    what: str
    """One line for docs/rules.md: what the rule checks."""
    why: str
    """What happens otherwise."""
    source: str
    """Where the fact comes from (vllm-facts.md section, vLLM source or issue)."""
    test: Predicate

    def finding(self, facts: Facts) -> Finding:
        return Finding(self.code, self.severity, self.key,
                       self.message.format(**facts), self.fix.format(**facts))

    def run(self, ctx: Context) -> Finding | None:
        facts = self.test(ctx)
        return None if facts is None else self.finding(facts)


def gib(value: float) -> str:
    """GiB for messages, two decimals (as vLLM logs them)."""
    return f"{value:.2f}"


def version_text(version: tuple[int, int, int]) -> str:
    return "v" + ".".join(str(part) for part in version)


def divisors(n: int, limit: int) -> list[int]:
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]
