"""`vllm-stack gpus` and `vllm-stack models`: the catalogs `hardware.gpu` and `model.name` name."""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import Any

from vllm_serving.catalog.gpus import GPU_ALIASES, GPUS, GpuSpec
from vllm_serving.catalog.models import CATALOG, CatalogEntry, hugging_face_id
from vllm_serving.cli.verbs import verb_help

TYPED_NAMES = ("--gpu and --model (init, capacity) also take the names people have at hand: nvidia-smi's "
               "name (NVIDIA GeForce RTX 4090), the node label, a Hugging Face id (Qwen/Qwen3-8B), or a part "
               "only one entry has (4090), and say which entry they took; a stack file names the entry or an "
               "alias.")


def register(sub: Any) -> None:
    gpus = sub.add_parser("gpus", help=verb_help("gpus"))
    gpus.add_argument("--json", action="store_true", help="machine-readable output")
    gpus.set_defaults(func=run_gpus)
    models = sub.add_parser("models", help=verb_help("models"))
    models.add_argument("--json", action="store_true", help="machine-readable output: every fact and its source")
    models.set_defaults(func=run_models)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                     for row in (header, *rows))


def _cc(gpu: GpuSpec) -> str:
    return f"{gpu.compute_capability[0]}.{gpu.compute_capability[1]}"


def _aliases(gpu: GpuSpec) -> list[str]:
    return sorted(alias for alias, name in GPU_ALIASES.items() if name == gpu.name)


def run_gpus(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps([
            {"name": g.name, "computeCapability": _cc(g), "memoryMib": g.memory_mib,
             "memoryGib": round(g.memory_gib, 1), "architecture": g.architecture, "productLabel": g.product_label,
             "bf16": g.supports_bf16, "fp8": g.supports_fp8_w8a8, "aliases": _aliases(g)}
            for g in GPUS.values()], indent=2))
        return 0
    print(_table(("GPU", "CC", "GiB", "ARCHITECTURE", "KUBERNETES LABEL (nvidia.com/gpu.product)", "ALIASES"),
                 [(g.name, _cc(g), f"{round(g.memory_gib, 1):g}", g.architecture, g.product_label,
                   ", ".join(_aliases(g))) for g in GPUS.values()]))
    print("\n" + textwrap.fill(TYPED_NAMES, width=100))
    return 0


def _notes(m: CatalogEntry) -> str:
    """What sets the model apart for sizing: hybrid, latent or sliding-window attention, experts."""
    parts = [
        ("hybrid attention", m.linear_attention is not None),
        ("MLA (KV not sized)", m.mla is not None),
        (f"window {m.sliding_window} on {m.sliding_window_layers}/{m.full_attention_layers} layers",
         m.sliding_window_layers > 0),
        (f"MoE {m.experts.num_experts}x{m.experts.experts_per_token}" if m.experts else "", m.experts is not None),
        (f"{m.mtp_layers} MTP layer(s)", m.mtp_layers > 0),
    ]
    return ", ".join(text for text, on in parts if on)


def _facts(name: str, entry: CatalogEntry) -> dict[str, Any]:
    facts: dict[str, Any] = {"name": name, "huggingFaceId": hugging_face_id(entry),
                             **entry.model_dump(mode="json", by_alias=True, exclude_none=True)}
    facts["totalWeightsGib"] = round(entry.total_weights_gib, 2)
    return facts


def run_models(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps([_facts(name, entry) for name, entry in CATALOG.items()], indent=2))
        return 0
    print(_table(("MODEL", "HUGGING FACE ID", "ARCHITECTURE", "PARAMS", "WEIGHTS", "CONTEXT", "NOTES"),
                 [(name, hugging_face_id(m), m.architecture, f"{m.params_billion:g}B",
                   m.quantization or m.weights_dtype, str(m.max_position_embeddings), _notes(m))
                  for name, m in CATALOG.items()]))
    print("\nEvery entry's source (its config.json) and facts: vllm-stack models --json")
    print(textwrap.fill(TYPED_NAMES, width=100))
    return 0
