"""What a rule is: a row of data (code, severity, key, message, fix, docs) plus one predicate.

A predicate returns None when the stack passes, or the facts (a mapping) that fill the
message and fix templates when it trips. Predicates read a `Context`: the resolved spec plus
the derived facts several rules share (compute dtype, quantization, capacity plan, the vLLM
release the image runs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property

import msgspec

from vllm_serving.engine.release_registry import VllmRelease, release_for_tag
from vllm_serving.findings import Finding, Severity, config_key
from vllm_serving.planner.capacity import CapacityPlan, compute_dtype, parse_vllm_version, plan_capacity
from vllm_serving.settings import EngineSettings
from vllm_serving.settings.engine import AUTO_FIT
from vllm_serving.spec import ServingSpec
from vllm_serving.startup.max_len import DerivedLength, derived_max_model_len, hf_overrides

Facts = Mapping[str, object]
FP8_KV = ("fp8", "fp8_e4m3", "fp8_e5m2")
KEY = "key"
"""A fact naming the config key that caused a finding when it is not the rule's own key."""


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


    @cached_property
    def compute_dtype(self) -> str:
        return compute_dtype(self.model, self.gpu, self.engine.dtype)

    @property
    def quantization(self) -> str | None:
        """`--quantization` if forced, else the checkpoint's own method."""
        return self.engine.quantization or self.model.quantization

    @property
    def quantization_key(self) -> str:
        """The key behind `quantization`: the forced flag, else the checkpoint (the model)."""
        return config_key("engine", "quantization") if self.engine.quantization else config_key("model", "name")

    @property
    def fp8_weights(self) -> bool:
        return self.model.is_fp8 or self.engine.quantization == "fp8"

    @property
    def fp8_kv(self) -> bool:
        return self.engine.kv_cache_dtype in FP8_KV

    @property
    def hybrid(self) -> bool:
        """Linear-attention (Gated DeltaNet) layers beside attention: vLLM's `is_hybrid`."""
        return self.model.linear_attention is not None

    @cached_property
    def vllm_version(self) -> tuple[int, int, int] | None:
        return parse_vllm_version(self.settings.image.tag)

    @cached_property
    def _release(self) -> tuple[VllmRelease, str | None]:
        return release_for_tag(self.settings.image.tag)

    @property
    def release(self) -> VllmRelease:
        """The registry of the image's vLLM release; the newest known one for an unknown tag."""
        return self._release[0]

    @property
    def release_unknown(self) -> bool:
        return self._release[1] is not None

    @cached_property
    def plan(self) -> CapacityPlan:
        return plan_capacity(self.spec)

    @cached_property
    def derived_max_len(self) -> DerivedLength | None:
        """The longest context the release derives for the model after `--hf-overrides`; None
        when its registry does not say how."""
        overrides = hf_overrides(self.extra_values("--hf-overrides"))
        return derived_max_model_len(self.model, self.release, overrides)

    @property
    def max_model_len(self) -> int:
        """The max_model_len vLLM configures: the stack's, else (unset, or -1 before fitting) the
        derived one."""
        wanted = self.engine.max_model_len
        if wanted is not None and wanted != AUTO_FIT:
            return wanted
        derived = self.derived_max_len
        return derived.tokens if derived is not None else self.model.max_position_embeddings

    def extra_switch(self, flag: str) -> bool | None:
        """What extraArgs set a boolean flag to (`--flag` true, `--no-flag` false; the last one
        wins, as in argparse), matched the way the release's parser matches; None when unset."""
        value = None
        for arg in self.engine.extra_args:
            found = self.release.match(arg)
            if found is not None and found.flag.name == flag:
                value = not found.negated
        return value

    def extra_values(self, flag: str) -> list[tuple[str, str]]:
        """Each (option, value) extraArgs give `flag`: `--flag=v`, `--flag v`, `--flag.sub.key v`
        (the option keeps a dotted JSON key); the value is empty when nothing follows."""
        args = (*self.engine.extra_args, "")
        values = []
        for arg, following in zip(args, args[1:], strict=False):
            found = self.release.match(arg)
            if found is not None and found.flag.name == flag:
                option, eq, inline = arg.partition("=")
                values.append((option, inline if eq else following))
        return values

    @property
    def chunked_prefill(self) -> bool:
        """vLLM's default for generative models is on; only extraArgs can turn it off."""
        return self.extra_switch("--enable-chunked-prefill") is not False


Predicate = Callable[[Context], Facts | list[Facts] | None]
"""Facts for one finding, a list for one finding each (two bad host paths, two bad extraArgs
entries: the user fixes both in one run), or None when the rule holds."""


class Rule(msgspec.Struct, frozen=True):
    """One compatibility rule: data for the finding and the docs, and the predicate."""

    code: str
    """Stable kebab-case identifier, e.g. `dtype-bf16-unsupported`."""
    severity: Severity
    key: str
    """Full config key the finding names, from `findings.config_key`; a predicate may name
    another in its facts (`key`) when the stack's cause is elsewhere (a forced
    `engine.quantization` rather than the checkpoint behind `model.name`)."""
    message: str
    """What is wrong; a `str.format` template over the predicate's facts."""
    fix: str
    """What to change; a template too."""
    what: str
    """One line for docs/rules.md: what the rule checks."""
    why: str
    """What happens otherwise."""
    source: str
    """Where the fact comes from: the vLLM v0.19.1 source file and function (paths under
    `vllm/` of the wheel), or this project's own files."""
    test: Predicate
    guards: str | None = None
    """What the rule protects that no waiver may set aside (a key of `finding_codes.UNWAIVABLE`:
    secrets, host paths, exposure); None for a fact about vLLM or the hardware, which a stack's
    `vllm-serving:waivers` may override when this project reads it wrong."""

    def finding(self, facts: Facts) -> Finding:
        key = str(facts.get(KEY, self.key))
        return Finding(self.code, self.severity, key, self.message.format(**facts), self.fix.format(**facts))

    def run(self, ctx: Context) -> list[Finding]:
        facts = self.test(ctx)
        if facts is None:
            return []
        return [self.finding(f) for f in (facts if isinstance(facts, list) else [facts])]


def gib(value: float) -> str:
    """GiB for messages, two decimals (as vLLM logs them)."""
    return f"{value:.2f}"


def version_text(version: tuple[int, int, int]) -> str:
    return "v" + ".".join(str(part) for part in version)


def divisors(n: int, limit: int) -> list[int]:
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]
