"""`--gpu` and `--model` as people type them, for every verb that takes them (init, capacity).

A name the catalog lookup takes but spells differently is said back on stderr (`--gpu '4090' taken
as RTX-4090 (...)`), so the output on stdout stays what scripts read; a name it cannot take is an
UnusableName whose message gives the candidates.
"""

from __future__ import annotations

import sys

from vllm_serving.catalog.gpus import GPUS, GpuSpec, lookup_gpu
from vllm_serving.catalog.models import MODELS, ModelArchitecture, lookup_model
from vllm_serving.catalog.names import Lookup, compact

# What people with no GPU type for one; vLLM's CPU backend is a stack setting, not a GPU.
NO_GPU = frozenset({"cpu", "none", "nogpu"})
NO_GPU_HINT = ("there is no GPU to size for: a machine without one runs vLLM's CPU image - copy the example "
               "Pulumi.local.yaml (hardware.device: cpu; docs/deploy.md), or run `make demo`")


class UnusableName(Exception):
    """A typed name that picks no one catalog entry; the message says what it could be."""


def _taken(flag: str, found: Lookup, catalog: str, listing: str, notes: list[str] | None) -> str:
    if found.name is None:
        raise UnusableName(f"{flag} {found.refusal(catalog)} ({listing} lists them)")
    if found.note is not None:
        note = f"{flag} {found.note}"
        print(f"vllm-stack: {note}", file=sys.stderr)
        if notes is not None:
            notes.append(note)
    return found.name


def gpu_named(typed: str, notes: list[str] | None = None, flag: str = "--gpu") -> GpuSpec:
    """The catalog GPU for a typed name; says back a name it had to interpret (also into `notes`)."""
    if compact(typed) in NO_GPU:
        raise UnusableName(f"{flag} {typed!r}: {NO_GPU_HINT}")
    return GPUS[_taken(flag, lookup_gpu(typed), "GPU catalog", "vllm-stack gpus", notes)]


def model_named(typed: str, notes: list[str] | None = None, flag: str = "--model") -> tuple[str, ModelArchitecture]:
    """(catalog name, model) for a typed name; says back a name it had to interpret."""
    name = _taken(flag, lookup_model(typed), "model catalog", "vllm-stack models", notes)
    return name, MODELS[name]
