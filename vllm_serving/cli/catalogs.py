"""`vllm-stack gpus` and `vllm-stack models`: the catalogs `hardware.gpu` and `model.name` name."""

from __future__ import annotations

import argparse
import json
from typing import Any

from vllm_serving.catalog.gpus import GPUS
from vllm_serving.catalog.models import MODELS


def register(sub: Any) -> None:
    gpus = sub.add_parser("gpus", help="list the GPU catalog (names for hardware.gpu)")
    gpus.add_argument("--json", action="store_true", help="machine-readable output")
    gpus.set_defaults(func=run_gpus)
    models = sub.add_parser("models", help="list the model catalog (names for model.name)")
    models.add_argument("--json", action="store_true", help="machine-readable output")
    models.set_defaults(func=run_models)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                     for row in (header, *rows))


def run_gpus(args: argparse.Namespace) -> int:
    rows = [{"name": g.name, "computeCapability": f"{g.compute_capability[0]}.{g.compute_capability[1]}",
             "memoryGib": round(g.memory_gib, 1), "architecture": g.architecture,
             "productLabel": g.product_label} for g in GPUS.values()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(_table(("GPU", "CC", "GiB", "ARCHITECTURE", "KUBERNETES LABEL (nvidia.com/gpu.product)"),
                 [(g.name, f"{g.compute_capability[0]}.{g.compute_capability[1]}", f"{round(g.memory_gib, 1):g}",
                   g.architecture, g.product_label) for g in GPUS.values()]))
    return 0


def run_models(args: argparse.Namespace) -> int:
    rows = [{"name": name, "architecture": m.architecture, "family": m.family,
             "paramsBillion": m.params_billion, "weightsDtype": m.weights_dtype,
             "quantization": m.quantization, "maxPositionEmbeddings": m.max_position_embeddings,
             "hybrid": m.linear_attention is not None, "mtpLayers": m.mtp_layers} for name, m in MODELS.items()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    notes = {name: ", ".join(n for n, on in (("hybrid attention", m.linear_attention is not None),
                                             (f"{m.mtp_layers} MTP layer(s)", m.mtp_layers > 0)) if on)
             for name, m in MODELS.items()}
    print(_table(("MODEL", "ARCHITECTURE", "PARAMS", "WEIGHTS", "CONTEXT", "NOTES"),
                 [(name, m.architecture, f"{m.params_billion:g}B", m.quantization or m.weights_dtype,
                   str(m.max_position_embeddings), notes[name]) for name, m in MODELS.items()]))
    return 0
