"""Typed views of the registry sections the rules read beyond names and flags (schema 2).

Each view is built on first use from the release's JSON (`VllmRelease.raw`) and kept: a check
only pays for the sections it reads. A registry generated before schema 2 (v0.11.0's) has none
of these sections; every view then says "not known" (None / empty), and the rules that need the
fact do not decide - they never guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import msgspec

from vllm_serving.engine.release_registry import VllmRelease


class BackendCheck(msgspec.Struct, frozen=True):
    """One reason `validate_configuration` gives, and when (an expression of its inputs)."""

    reason: str | None
    when: str | None
    """None: the generator could not read the condition."""
    reason_expr: str | None = None
    """A reason computed from the inputs (`supports_combination`'s)."""
    passes_when_unset: str | None = None
    """An input (e.g. `block_size`) at whose default the unreadable check cannot trip."""


class BackendFacts(msgspec.Struct, frozen=True):
    name: str
    checks: tuple[BackendCheck, ...] | None
    kv_cache_storage: Mapping[str, str | None] | None
    """FP8 spelling -> the torch dtype the cache holds (None: the backend raises on it)."""
    kernels: str | None
    """"triton" when the backend reads the cache through vLLM's Triton kernels."""
    source: str | None


class Selection(msgspec.Struct, frozen=True):
    priorities: Mapping[str, str | None]
    """"default" / "mla" -> expression giving the ordered backend names."""
    fa_version: str | None
    source: str


class MaxLenFacts(msgspec.Struct, frozen=True):
    keys: tuple[str, ...]
    rope_types_not_scaling: tuple[str, ...]
    rope_from_original: Mapping[str, str]
    prescaled_model_types: tuple[str, ...]
    source: str


class ModelFacts(msgspec.Struct, frozen=True):
    float16_refused: frozenset[str] | None
    mm_prefix_model_types: frozenset[str] | None
    mm_prefix_off_when_text_only: bool
    multimodal_architectures: frozenset[str] | None
    sink_architectures: Mapping[str, str]
    max_len: MaxLenFacts | None
    source: str | None


class MtpRewrite(msgspec.Struct, frozen=True):
    mtp_model_type: str
    n_predict_key: str | None
    n_predict_default: int | None
    requires_positive: str | None


class SpeculativeFacts(msgspec.Struct, frozen=True):
    by_model_type: Mapping[str, MtpRewrite] | None
    by_architecture: Mapping[str, MtpRewrite]
    draft_model_methods: frozenset[str]
    draft_model_refuses_multimodal: bool
    draft_model_source: str | None
    aux_hidden_states_methods: frozenset[str] = frozenset()
    """Methods drafting from the target's auxiliary hidden states (eagle3)..."""
    aux_hidden_states_model_types: tuple[str, ...] = ()
    """... for targets whose text model_type contains one of these."""
    aux_hidden_states_source: str | None = None
    async_scheduling_methods: frozenset[str] | None = None
    """The methods `--async-scheduling` takes (None: the release refuses none)."""
    async_scheduling_source: str | None = None


class QuantizationFacts(msgspec.Struct, frozen=True):
    act_dtypes: Mapping[str, str | None]
    """Method -> `get_supported_act_dtypes()` as an expression of `device_capability`."""
    type_map: Mapping[str, tuple[object, ...]]
    """Marlin override method -> its TYPE_MAP keys: weight bits, or (bits, symmetric) pairs."""
    override_order: tuple[str, ...] | None
    marlin_min_capability: int | None
    marlin_group_sizes: tuple[int, ...] | None
    fp8_moe_checks: tuple[tuple[str, str], ...] | None
    """(condition over intermediate_size_per_partition, block_n, block_k, tp_size; message)."""
    fp8_linear_row: tuple[tuple[str, str], ...] | None = None
    """`validate_fp8_block_shape` on a row-parallel layer: (condition over tp_size, input_size,
    input_size_per_partition, block_k; message)."""
    scheme_min_capability: Mapping[str, int] | None = None
    """Compressed-tensors scheme class -> its minimum compute capability (75 = CC 7.5)."""
    fp8_moe_refine_min_block: int | None = None
    """v0.29+: a shard refined to gcd(block_n, block_k, shard, hidden size)-wide scale blocks when
    that is at least this (fused_moe/oracle/fp8.py refine_fp8_moe_block_shape) skips fp8_moe_checks."""


class EnvValue(msgspec.Struct, frozen=True):
    choices: tuple[str, ...] | None = None
    case_sensitive: bool = True
    is_list: bool = False
    type: str | None = None
    """"int" / "float": the value must parse as one."""


class Gate(msgspec.Struct, frozen=True):
    when: str
    flags: Mapping[str, str]
    """dest -> flag name."""
    defaults: Mapping[str, Any]
    exception: str
    message: str
    source: str


def _section(release: VllmRelease, name: str) -> Mapping[str, Any]:
    value = release.raw.get(name)
    return value if isinstance(value, Mapping) else {}


@cache
def backends(release: VllmRelease) -> Mapping[str, BackendFacts]:
    found = _section(release, "attention_backends").get("backends") or {}
    return {name: BackendFacts(
        name=name,
        checks=tuple(BackendCheck(c.get("reason"), c.get("when"), c.get("reason_expr"), c.get("passes_when_unset"))
                     for c in b["checks"]) if b.get("checks") is not None else None,
        kv_cache_storage=b.get("kv_cache_storage"), kernels=b.get("kernels"), source=b.get("source"),
    ) for name, b in found.items()}


@cache
def selection(release: VllmRelease) -> Selection | None:
    found = _section(release, "attention_backends").get("selection")
    if not found:
        return None
    return Selection(priorities=found.get("priorities") or {}, fa_version=found.get("fa_version"),
                     source=found.get("source", ""))


def _frozen(value: Any) -> frozenset[str] | None:
    return frozenset(value) if value is not None else None


@cache
def models(release: VllmRelease) -> ModelFacts:
    found = _section(release, "models")
    max_len = found.get("max_len")
    return ModelFacts(
        float16_refused=_frozen(found.get("float16_refused")),
        mm_prefix_model_types=_frozen(found.get("mm_prefix_model_types")),
        mm_prefix_off_when_text_only=bool(found.get("mm_prefix_off_when_text_only")),
        multimodal_architectures=_frozen(found.get("multimodal_architectures")),
        sink_architectures=found.get("sink_architectures") or {},
        max_len=MaxLenFacts(tuple(max_len["keys"] or ()), tuple(max_len["rope_types_not_scaling"] or ()),
                            max_len["rope_from_original"], tuple(max_len["prescaled_model_types"]),
                            max_len["source"]) if max_len else None,
        source=found.get("source"),
    )


def _rewrite(raw: Mapping[str, Any]) -> MtpRewrite:
    return MtpRewrite(raw["mtp_model_type"], raw.get("n_predict_key"), raw.get("n_predict_default"),
                      raw.get("requires_positive"))


@cache
def speculative(release: VllmRelease) -> SpeculativeFacts:
    found = _section(release, "speculative")
    rewrites = found.get("mtp_rewrites")
    draft = found.get("draft_model") or {}
    aux = found.get("aux_hidden_states") or {}
    asyncs = found.get("async_scheduling")
    return SpeculativeFacts(
        by_model_type={k: _rewrite(v) for k, v in rewrites["model_types"].items()} if rewrites else None,
        by_architecture={k: _rewrite(v) for k, v in (rewrites or {}).get("architectures", {}).items()},
        draft_model_methods=frozenset(draft.get("methods") or ()),
        draft_model_refuses_multimodal=bool(draft.get("refuses_multimodal_target")),
        draft_model_source=draft.get("source"),
        aux_hidden_states_methods=frozenset(aux.get("methods") or ()),
        aux_hidden_states_model_types=tuple(aux.get("model_types") or ()),
        aux_hidden_states_source=aux.get("source"),
        async_scheduling_methods=frozenset(asyncs["methods"]) if asyncs else None,
        async_scheduling_source=asyncs.get("source") if asyncs else None,
    )


@cache
def quantization(release: VllmRelease) -> QuantizationFacts:
    found = _section(release, "quantization")
    marlin = found.get("marlin") or {}
    checks = found.get("fp8_moe_block_checks")
    order = found.get("override_order")
    linear = found.get("fp8_linear_block_checks")
    schemes = found.get("compressed_tensors_schemes")
    return QuantizationFacts(
        act_dtypes={n: m.get("act_dtypes") for n, m in (found.get("methods") or {}).items()},
        type_map={n: tuple(tuple(k) if isinstance(k, list) else k for k in m["type_map"])
                  for n, m in (found.get("methods") or {}).items() if m.get("type_map")},
        override_order=tuple(order) if order is not None else None,
        marlin_min_capability=marlin.get("min_capability"),
        marlin_group_sizes=tuple(marlin["group_sizes"]) if marlin.get("group_sizes") else None,
        fp8_moe_checks=tuple((c["when"], c["message"]) for c in checks) if checks else None,
        fp8_linear_row=_checks(linear.get("row")) if linear else None,
        scheme_min_capability=schemes.get("min_capability") if schemes else None,
        fp8_moe_refine_min_block=found.get("fp8_moe_refine_min_block"),
    )


def _checks(found: Any) -> tuple[tuple[str, str], ...] | None:
    return tuple((c["when"], c["message"]) for c in found) if found else None


@cache
def load_formats(release: VllmRelease) -> tuple[frozenset[str], str] | None:
    """`--load-format` values the release has a loader for, and where they are listed."""
    found = _section(release, "load_formats")
    return (frozenset(found["names"]), found["source"]) if found.get("names") else None


@cache
def env_values(release: VllmRelease) -> Mapping[str, EnvValue]:
    values = _section(release, "env_vars").get("values") or {}
    return {name: EnvValue(tuple(v["choices"]) if v.get("choices") is not None else None,
                           bool(v.get("case_sensitive", True)), bool(v.get("list")), v.get("type"))
            for name, v in values.items()}


@cache
def env_model_checks(release: VllmRelease) -> Mapping[str, str]:
    """Variable -> the source of the check that compares it with the model."""
    checks = _section(release, "env_vars").get("model_checks") or {}
    return {name: c["source"] for name, c in checks.items()}


@cache
def gates(release: VllmRelease) -> tuple[Gate, ...]:
    found = _section(release, "gates").get("gates") or []
    return tuple(Gate(g["when"], g["flags"], g["defaults"], g["exception"], g["message"], g["source"])
                 for g in found)


@cache
def performance_modes(release: VllmRelease) -> Mapping[str, Mapping[str, int]] | None:
    return _section(release, "gates").get("performance_mode")
