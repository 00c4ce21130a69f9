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
                 [(r["name"], r["computeCapability"], f"{r['memoryGib']:g}", r["architecture"],
                   r["productLabel"]) for r in rows]))
    return 0


def run_models(args: argparse.Namespace) -> int:
    rows = [{"name": name, "architecture": m.architecture, "family": m.family,
             "paramsBillion": m.params_billion, "weightsDtype": m.weights_dtype,
             "quantization": m.quantization, "maxPositionEmbeddings": m.max_position_embeddings,
             "hybrid": m.linear_attention is not None, "mtpLayers": m.mtp_layers} for name, m in MODELS.items()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(_table(("MODEL", "ARCHITECTURE", "PARAMS", "WEIGHTS", "CONTEXT", "NOTES"),
                 [(r["name"], str(r["architecture"]), f"{r['paramsBillion']:g}B",
                   str(r["quantization"] or r["weightsDtype"]), str(r["maxPositionEmbeddings"]),
                   ", ".join(n for n, on in (("hybrid attention", r["hybrid"]),
                                              (f"{r['mtpLayers']} MTP layer(s)", r["mtpLayers"])) if on))
                  for r in rows]))
    return 0
