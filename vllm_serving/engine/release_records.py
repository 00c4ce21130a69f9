"""The records of a vLLM release's registry (release_registry.py): a `vllm serve` flag, the parser
names, a speculative or quantization method, an attention backend, a metric."""

from __future__ import annotations

import msgspec

_SERIES_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
_ANY_SERIES = ("", "_total", "_bucket", "_sum", "_count")  # a metric whose type is not static


class ServeFlag(msgspec.Struct, frozen=True):
    """One `vllm serve` option as the release's argparse parser defines it."""

    name: str  # the first long option string, e.g. --tensor-parallel-size
    aliases: tuple[str, ...]  # other option strings, e.g. -tp
    negations: tuple[str, ...]  # --no-X of a BooleanOptionalAction
    action: str  # store, store_true, boolean_optional, append, help, custom:<Class>
    value_type: str  # bool, int, float, str or json
    takes_value: bool
    nargs: int | str | None  # None: one value; "?", "+" or a count
    choices: tuple[str | int | float, ...] | None
    json_keys: bool  # accepts --flag.sub.key VALUE (FlexibleArgumentParser's dotted JSON keys)
    human_readable: bool  # int accepting 1k / 2M suffixes
    dest: str
    deprecated: bool
    hidden: bool  # help=SUPPRESS: internal, absent from --help
    group: str | None  # the --help section (config class) it is listed under
    source: str  # file inside the wheel whose add_argument call defines it
    field: str | None  # file:Class.field the type was derived from

    @property
    def option_strings(self) -> tuple[str, ...]:
        return (self.name, *self.aliases, *self.negations)


class FlagMatch(msgspec.Struct, frozen=True):
    """What a command-line option string selects: the flag, and whether it is the --no- form."""

    flag: ServeFlag
    option: str
    negated: bool


class ParserFacts(msgspec.Struct, frozen=True):
    """How the release's FlexibleArgumentParser rewrites argv before argparse parses it."""

    allow_abbrev: bool
    underscore_to_dash: bool  # --max_model_len == --max-model-len (the key, up to the first '.')
    equals_value: bool  # --flag=value
    dotted_json_keys: bool  # --speculative-config.method ngram
    list_append_suffix: str | None  # --json-arg.key+ value appends to a list
    optimization_shorthand: str | None  # what -O<level> is rewritten to
    config_file_flag: str | None
    source: str


class SpeculativeMethod(msgspec.Struct, frozen=True):
    name: str
    alias_of: str | None  # deprecated spellings vLLM rewrites (deepseek_mtp -> mtp)
    needs_draft_model: bool | None  # None: not statically readable for this release
    draft: str | None  # "target_model" (MTP reuses the served model) or "none" (no weights)


class QuantizationMethod(msgspec.Struct, frozen=True):
    name: str
    min_capability: int | None  # get_min_capability(), e.g. 75 for CC 7.5; None: not static
    deprecated: bool
    config_class: str | None
    source: str | None


class AttentionBackend(msgspec.Struct, frozen=True):
    name: str
    class_path: str | None
    capability_known: bool
    min_capability: tuple[int, int] | None
    max_capability: tuple[int, int] | None
    majors: tuple[int, ...] | None
    kv_cache_dtypes: tuple[str, ...] | None  # the class's list
    kv_cache_dtypes_runtime: bool  # the backend also decides at run time (FA: fp8 with FA3 builds)
    source: str | None

    def supports_capability(self, major: int, minor: int) -> bool | None:
        """Whether `supports_compute_capability` accepts this GPU; None when not static."""
        if not self.capability_known:
            return None
        cc = (major, minor)
        return ((self.min_capability is None or cc >= self.min_capability)
                and (self.max_capability is None or cc <= self.max_capability)
                and (self.majors is None or major in self.majors))


class Metric(msgspec.Struct, frozen=True):
    name: str
    type: str | None  # gauge, counter, histogram; None when the release builds it indirectly
    hidden: bool  # only with --show-hidden-metrics-for-version
    source: str

    @property
    def series(self) -> tuple[str, ...]:
        """The names Prometheus scrapes (counters gain _total, histograms _bucket/_sum/_count)."""
        base = self.name.removesuffix("_total") if self.type == "counter" else self.name
        suffixes = _SERIES_SUFFIXES[self.type] if self.type else _ANY_SERIES
        return tuple(base + suffix for suffix in suffixes)
