"""Where each release's facts were read from, for docs/rules.md (generated, like the rule table).

Every registry names, per section, the file (inside the wheel) its facts come from; the tables
here put them side by side: one row per fact with its source in the pinned release and the
releases where it lives elsewhere, and one row per release with its wheel and what the generator
could not read. Only the docs generator and its test read every registry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

from vllm_serving.engine.release_registry import known_versions

PINNED = "0.19.1"
Getter = Callable[[Mapping[str, Any]], str | None]


def _get(*path: str) -> Getter:
    def read(data: Mapping[str, Any]) -> str | None:
        node: Any = data
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        return str(node) if node else None
    return read


def _gate_files(data: Mapping[str, Any]) -> str | None:
    gates = (data.get("gates") or {}).get("gates") or []
    files = sorted({g["source"].split()[0] for g in gates})
    return ", ".join(files) or None


def _flag_files(data: Mapping[str, Any]) -> str | None:
    files = sorted({f["source"] for f in (data.get("flags") or {}).values() if f.get("source")})
    return ", ".join(files) or None


FACTS: tuple[tuple[str, Getter], ...] = (
    ("`vllm serve` flags, choices, types", _flag_files),
    ("argv rewriting (FlexibleArgumentParser)", _get("parser", "source")),
    ("attention backends and their validate_configuration checks", _get("attention_backends", "source")),
    ("backend auto-selection order (CUDA)", _get("attention_backends", "selection", "source")),
    ("quantization methods, minimum CC, activation dtypes, packing", _get("quantization", "source")),
    ("Marlin's CC and group sizes (AWQ/GPTQ upgrade)", _get("quantization", "marlin", "source")),
    ("models refused in float16", _get("models", "source")),
    ("derived max_model_len (RoPE scaling)", _get("models", "max_len", "source")),
    ("multimodal-prefix model types", _get("models", "mm_prefix_source")),
    ("multimodal and attention-sink architectures", _get("models", "registry_source")),
    ("speculative methods, MTP rewrites", _get("speculative", "source")),
    ("draft model on a multimodal target", _get("speculative", "draft_model", "source")),
    ("environment variables and their values", _get("env_vars", "source")),
    ("VLLM_PP_LAYER_PARTITION against the model",
     _get("env_vars", "model_checks", "VLLM_PP_LAYER_PARTITION", "source")),
    ("feature gates (flag combinations refused)", _gate_files),
)


def _registries() -> dict[str, Mapping[str, Any]]:
    folder = resources.files("vllm_serving.engine") / "releases"
    return {v: json.loads((folder / f"v{v}.json").read_text(encoding="utf-8")) for v in known_versions()}


def _cell(text: str | None) -> str:
    return (text or "none in this release's registry").replace("|", "\\|")


def sources_table() -> str:
    """One row per fact: its file in the pinned release, and the releases that read it elsewhere."""
    registries = _registries()
    lines = [f"| fact | source in v{PINNED} | elsewhere in |", "|---|---|---|"]
    for fact, getter in FACTS:
        pinned = getter(registries[PINNED])
        differ: dict[str, list[str]] = {}
        for version, data in registries.items():
            found = getter(data)
            if found != pinned:
                differ.setdefault(_cell(found), []).append(f"v{version}")
        others = "; ".join(f"{', '.join(vs)}: {where}" for where, vs in differ.items()) or "-"
        lines.append(f"| {fact} | {_cell(pinned)} | {others} |")
    return "\n".join(lines)


def releases_table() -> str:
    """One row per release: the wheel it was generated from and what could not be read."""
    lines = ["| release | wheel | sha256 | schema | facts not read |", "|---|---|---|---|---|"]
    for version, data in _registries().items():
        wheel = data.get("wheel") or {}
        lines.append(f"| v{version} | {wheel.get('file', '')} | `{str(wheel.get('sha256', ''))[:16]}...` | "
                     f"{data.get('schema')} | {len(data.get('unextracted') or [])} |")
    return "\n".join(lines)
