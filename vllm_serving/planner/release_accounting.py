"""Each vLLM release's memory accounting, as data (`memory_accounting.json`), and its batch defaults.

Every minor release's latest patch was read (`/work/vllm-src/<ver>/vllm`, paths below are inside
the wheel's `vllm/` package); a release whose accounting code is unchanged points at the one it
matches (`same_as`) and overrides only what changed. docs/memory-accounting.md explains each key.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any, Literal

import msgspec

UsageContext = Literal["openai", "llm"]
"""`vllm serve` is "openai" (OPENAI_API_SERVER); the offline `LLM` class is "llm"."""


class BatchDefault(msgspec.Struct, frozen=True):
    min_total_gib: float
    not_names: tuple[str, ...]
    """Device-name substrings the rule excludes (A100s, GB10 Sparks)."""
    openai: tuple[int, int]
    llm: tuple[int, int]


class ReleaseAccounting(msgspec.Struct, frozen=True):
    version: tuple[int, ...]
    raw: dict[str, Any]
    batch_defaults: tuple[BatchDefault, ...]

    @property
    def name(self) -> str:
        return ".".join(map(str, self.version))

    def text(self, key: str) -> str:
        return str(self.raw[key])


class Accounting(msgspec.Struct, frozen=True):
    releases: tuple[ReleaseAccounting, ...]
    model: dict[str, Any]


_VERSION = re.compile(r"^v?(\d+(?:\.\d+)+)")


def parse_version(tag: str) -> tuple[int, ...] | None:
    """`v0.19.1-cu130`, `0.10.1.1`, `0.20.2+cu129` -> numbers; moving tags (`latest`) -> None."""
    match = _VERSION.match(tag.strip())
    return tuple(int(part) for part in match[1].split(".")) if match else None


def _merged(releases: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    """A release's keys over those of the release it is `same_as` (transitively)."""
    entry = releases[name]
    return {**_merged(releases, entry["same_as"]), **entry} if "same_as" in entry else dict(entry)


def _batch_rule(rule: dict[str, Any]) -> BatchDefault:
    return BatchDefault(
        min_total_gib=float(rule["when"].get("min_total_gib", 0)),
        not_names=tuple(rule["when"].get("not_names", ())),
        openai=(int(rule["openai"][0]), int(rule["openai"][1])),
        llm=(int(rule["llm"][0]), int(rule["llm"][1])),
    )


@cache
def load_accounting() -> Accounting:
    text = resources.files(__package__).joinpath("memory_accounting.json").read_text()
    data: dict[str, Any] = json.loads(text)
    releases = []
    for name in data["releases"]:
        raw = _merged(data["releases"], name)
        version = parse_version(name)
        assert version is not None, name
        rules = data["batch_defaults_sets"][raw["batch_defaults"]]
        releases.append(ReleaseAccounting(version, raw, tuple(_batch_rule(rule) for rule in rules)))
    releases.sort(key=lambda release: release.version)
    return Accounting(tuple(releases), data["model"])


def resolve_release(vllm_version: str) -> tuple[ReleaseAccounting, bool]:
    """The read release of the same minor version (the latest patch of every minor was read:
    patches keep the accounting but for the differences listed per entry), else the newest read
    release before it (moving tags: the newest); and whether it is that release itself."""
    releases = load_accounting().releases
    wanted = parse_version(vllm_version)
    if wanted is None:
        return releases[-1], False
    same_minor = [release for release in releases if release.version[:2] == wanted[:2]]
    if same_minor:
        at_or_below = [release for release in same_minor if release.version <= wanted]
        chosen = at_or_below[-1] if at_or_below else same_minor[0]
        return chosen, chosen.version == wanted
    older = [release for release in releases if release.version <= wanted]
    if not older:
        oldest = releases[0].name
        raise ValueError(
            f"vLLM {vllm_version} predates the oldest release whose memory accounting was read "
            f"({oldest}): vllm-serving:image.tag must name v{oldest} or newer"
        )
    return older[-1], older[-1].version == wanted


def batch_defaults(release: ReleaseAccounting, *, gpu_total_gib: float, gpu_name: str,
                   usage_context: UsageContext, max_num_batched_tokens: int | None,
                   max_num_seqs: int | None) -> tuple[int, int]:
    """max_num_batched_tokens and max_num_seqs as EngineArgs fills them for this GPU
    (engine/arg_utils.py get_batch_defaults); max_num_seqs never exceeds the token budget."""
    name = gpu_name.lower()
    rule = next(
        rule for rule in release.batch_defaults
        if gpu_total_gib >= rule.min_total_gib and not any(part in name for part in rule.not_names)
    )
    default_tokens, default_seqs = rule.openai if usage_context == "openai" else rule.llm
    tokens = max_num_batched_tokens or default_tokens
    return tokens, max_num_seqs or min(default_seqs, tokens)
