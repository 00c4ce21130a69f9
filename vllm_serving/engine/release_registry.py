"""The vLLM release registry: what each supported vLLM release accepts and exports, as data.

One JSON file per release in `releases/`, generated from that release's own wheel source by
`tools/vllm_release/generate.py` (see its README). A file is read only when its version is asked
for, and once: CLI start-up pays for the one release a stack uses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache, cached_property
from importlib import resources
from typing import Any

import msgspec

from vllm_serving.engine.release_records import (
    AttentionBackend,
    FlagMatch,
    Metric,
    ParserFacts,
    QuantizationMethod,
    ServeFlag,
    SpeculativeMethod,
)

_RELEASES = resources.files("vllm_serving.engine") / "releases"
_TAG_VERSION = re.compile(r"^v?(\d+(?:\.\d+){2,3}(?:\.post\d+)?)(?:$|[-+_])")


class VllmRelease(msgspec.Struct, frozen=True, eq=False, dict=True):
    """One release's registry. Compared by identity (one object per version, `load` caches it);
    `dict=True` holds the indexes below, built on first use."""

    version: str
    wheel: str
    parser: ParserFacts
    flags: Mapping[str, ServeFlag]
    tool_parsers: Mapping[str, str]  # name -> file registering it
    reasoning_parsers: Mapping[str, str]
    speculative_methods: Mapping[str, SpeculativeMethod]
    quantization_methods: Mapping[str, QuantizationMethod]
    attention_backends: Mapping[str, AttentionBackend]
    env_vars: frozenset[str]
    metrics: Mapping[str, Metric]
    sources: Mapping[str, str | None]  # section -> file it was read from
    unextracted: tuple[str, ...]  # facts the generator could not read for this release
    raw: Mapping[str, Any] = msgspec.field(default_factory=dict)
    """The whole document: the sections `release_facts` reads on demand (attention checks,
    quantization, models, gates ...); absent in registries generated before schema 2."""

    @cached_property
    def _by_option(self) -> dict[str, ServeFlag]:
        return {o: f for f in self.flags.values() for o in f.option_strings}

    @cached_property
    def _by_series(self) -> dict[str, Metric]:
        return {s: m for m in self.metrics.values() for s in (m.name, *m.series)}

    def __repr__(self) -> str:
        return f"VllmRelease({self.tag})"

    @property
    def tag(self) -> str:
        return f"v{self.version}"

    def flag(self, option: str) -> ServeFlag | None:
        """The flag an exact option string names: long name, alias (-tp) or --no- form."""
        return self._by_option.get(option)

    def resolve_abbrev(self, option: str) -> tuple[str, ...]:
        """The option strings argparse would consider for `option` (CPython `_parse_optional`):
        an exact match alone; else, for `--x`, every long option starting with it (when the
        parser allows abbreviations); for `-x`, options equal to its first two characters or
        starting with it. Exactly one result means argparse selects it; several is an error."""
        by_option = self._by_option
        head = option.split("=", 1)[0]  # no option string holds '=', so the whole is exact only as its head
        if head in by_option:
            return (head,)
        if option.startswith("--"):
            if not self.parser.allow_abbrev:
                return ()
            return tuple(sorted(o for o in by_option if o.startswith(head)))
        if option.startswith("-") and len(option) > 1:
            return tuple(sorted(o for o in by_option if o == option[:2] or o.startswith(option)))
        return ()

    def match(self, option: str) -> FlagMatch | None:
        """What one argv option selects after FlexibleArgumentParser's rewriting: underscores to
        dashes, `=value` and `.sub.key` dropped, aliases, --no- forms and unique prefixes."""
        key = self.normalise(option).split("=", 1)[0]
        if key.startswith("-") and "." in key:
            key = key.split(".", 1)[0]
        found = self.resolve_abbrev(key)
        if len(found) != 1:
            return None
        selected = self.flag(found[0])
        assert selected is not None
        return FlagMatch(selected, found[0], found[0] in selected.negations)

    def normalise(self, option: str) -> str:
        """FlexibleArgumentParser's rewrite of a long option: `_` to `-` in its name (up to the
        first '.' and before any '=')."""
        if not (option.startswith("--") and self.parser.underscore_to_dash):
            return option
        key, sep, value = option.partition("=")
        name, dot, rest = key[2:].partition(".")
        return f"--{name.replace('_', '-')}{dot}{rest}{sep}{value}"

    @property
    def tool_parser_names(self) -> frozenset[str]:
        return frozenset(self.tool_parsers)

    @property
    def reasoning_parser_names(self) -> frozenset[str]:
        return frozenset(self.reasoning_parsers)

    @property
    def metric_names(self) -> frozenset[str]:
        return frozenset(self.metrics)

    def metric(self, series: str) -> Metric | None:
        """The metric behind a scraped series name (`vllm:prompt_tokens_total` -> prompt_tokens)."""
        return self._by_series.get(series)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


@cache
def known_versions() -> tuple[str, ...]:
    """Versions with a registry file, oldest first."""
    names = [p.name for p in _RELEASES.iterdir() if p.name.startswith("v") and p.name.endswith(".json")]
    return tuple(sorted((n[1:-5] for n in names), key=_version_key))


def load(version: str) -> VllmRelease:
    """The registry of one release (`0.19.1` or `v0.19.1`), read on first use."""
    return _load(version.removeprefix("v"))


@cache
def _load(version: str) -> VllmRelease:
    if version not in known_versions():
        raise KeyError(f"no vLLM release registry for {version!r}; known: {', '.join(known_versions())}")
    data = json.loads((_RELEASES / f"v{version}.json").read_text(encoding="utf-8"))
    return release_from_json(data)


def release_for_tag(tag: str | None) -> tuple[VllmRelease, str | None]:
    """The release an image tag (`v0.19.1`, `v0.19.1-cu128`, `0.19.1`) runs, and a warning when
    the tag names no known release (then the newest known release stands in)."""
    found = _TAG_VERSION.match(tag) if tag else None
    if found and found.group(1) in known_versions():
        return load(found.group(1)), None
    newest = known_versions()[-1]
    what = f"image tag {tag!r}" if tag else "no image tag"
    return load(newest), (
        f"{what} names no vLLM release this project has data for "
        f"(known: {', '.join('v' + v for v in known_versions())}); checking against v{newest}, "
        "the newest known. Pin a known release tag, or add its registry with "
        "tools/vllm_release/generate.py"
    )


def release_from_json(data: dict[str, Any]) -> VllmRelease:
    """A release from the generator's JSON document."""
    parser = data["parser"]
    backends = data["attention_backends"]
    return VllmRelease(
        version=data["version"],
        wheel=data["wheel"]["file"],
        parser=ParserFacts(
            allow_abbrev=parser["allow_abbrev"], underscore_to_dash=parser["underscore_to_dash"],
            equals_value=parser["equals_value"], dotted_json_keys=parser["dotted_json_keys"],
            list_append_suffix=parser["list_append_suffix"],
            optimization_shorthand=parser["optimization_shorthand"],
            config_file_flag=parser["config_file_flag"], source=parser["source"],
        ),
        flags={name: _flag(name, f) for name, f in data["flags"].items()},
        tool_parsers=data["tool_parsers"],
        reasoning_parsers=data["reasoning_parsers"],
        speculative_methods={
            n: SpeculativeMethod(n, m["alias_of"], m["needs_draft_model"], m["draft"])
            for n, m in data["speculative"]["methods"].items()
        },
        quantization_methods={
            n: QuantizationMethod(n, q["min_capability"], q["deprecated"], q["config_class"], q["source"])
            for n, q in data["quantization"]["methods"].items()
        },
        attention_backends={n: _backend(n, b) for n, b in backends["backends"].items()},
        env_vars=frozenset(data["env_vars"]["names"]),
        metrics={n: Metric(n, m["type"], m["hidden"], m["source"]) for n, m in data["metrics"].items()},
        sources={
            "parser": parser["source"], "speculative": data["speculative"]["source"],
            "quantization": data["quantization"]["source"], "attention_backends": backends["source"],
            "env_vars": data["env_vars"]["source"],
        },
        unextracted=tuple(data["unextracted"]),
        raw=data,
    )


def _flag(name: str, f: dict[str, Any]) -> ServeFlag:
    return ServeFlag(
        name=name, aliases=tuple(f["aliases"]), negations=tuple(f["negations"]), action=f["action"],
        value_type=f["type"], takes_value=f["takes_value"], nargs=f["nargs"],
        choices=tuple(f["choices"]) if f["choices"] is not None else None, json_keys=f["json"],
        human_readable=f["human_readable"], dest=f["dest"], deprecated=f["deprecated"],
        hidden=f["hidden"], group=f["group"], source=f["source"], field=f["field"],
    )


def _backend(name: str, b: dict[str, Any]) -> AttentionBackend:
    cc = b["compute_capability"]

    def pair(key: str) -> tuple[int, int] | None:
        return (cc[key][0], cc[key][1]) if cc and cc[key] else None

    return AttentionBackend(
        name=name, class_path=b["class"], capability_known=cc is not None,
        min_capability=pair("min"), max_capability=pair("max"),
        majors=tuple(cc["majors"]) if cc and cc["majors"] else None,
        kv_cache_dtypes=tuple(b["kv_cache_dtypes"]) if b["kv_cache_dtypes"] is not None else None,
        kv_cache_dtypes_runtime=b["kv_cache_dtypes_runtime"],
        source=b["source"],
    )


@cache
def release_section(version: str, section: str) -> Any:
    """One section of a release's generated document as written, for sections `VllmRelease` does
    not model (the preflight's entry points); None for an unknown release or section."""
    if version not in known_versions():
        return None
    return json.loads((_RELEASES / f"v{version}.json").read_text(encoding="utf-8")).get(section)
