"""`vllm-stack capacity`: the KV-cache planner on its own, for a catalog model or a config.json."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, get_args

from vllm_serving.catalog.gpus import GPUS, find_gpu, suggest_gpu
from vllm_serving.catalog.hf_config import load_hf_config
from vllm_serving.catalog.models import MODELS, ModelArchitecture, find_model, suggest_model
from vllm_serving.findings import ConfigError
from vllm_serving.planner.capacity import (
    PINNED_VLLM_VERSION,
    CapacityInputs,
    draft_attention_layers,
    parse_vllm_version,
    plan,
)
from vllm_serving.settings import Dtype, KvCacheDtype
from vllm_serving.stack_files.loader import project_defaults

# The JSON keys scripts rely on first, then the rest of the plan.
MAIN_KEYS = ("weights_gib_per_gpu", "kv_bytes_per_token_per_gpu", "available_kv_gib",
             "kv_cache_tokens", "max_concurrency")


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above 0")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is below 0")
    return value


def _pinned_version(project_dir: Path) -> tuple[int, int, int]:
    """The project's image.tag (Pulumi.yaml), else the release the planner reproduces."""
    try:
        image = project_defaults(project_dir).get("vllm-serving:image")
    except ConfigError:
        image = None
    tag = image.get("tag") if isinstance(image, dict) else None
    return parse_vllm_version(tag if isinstance(tag, str) else None) or PINNED_VLLM_VERSION


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "capacity", help="KV-cache size and concurrency for a model on a GPU",
        description="Estimate weights per GPU, the memory left for the KV cache, its size in "
                    "tokens and the concurrency at max-model-len, as vLLM (V1) computes them.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="catalog model, e.g. Qwen3.5-27B")
    source.add_argument("--model-config", type=Path, metavar="PATH",
                        help="a Hugging Face config.json as published")
    parser.add_argument("--gpu", required=True, help="catalog GPU, e.g. A100-80GB")
    parser.add_argument("--gpus", type=int, help="GPUs available (default: TP x PP)")
    parser.add_argument("--tp", type=int, required=True, help="tensor parallel size")
    parser.add_argument("--pp", type=int, default=1, help="pipeline parallel size (default 1)")
    parser.add_argument("--dtype", choices=get_args(Dtype), help="--dtype (default auto)")
    parser.add_argument("--kv-cache-dtype", choices=get_args(KvCacheDtype), help="default auto")
    parser.add_argument("--gpu-memory-utilization", type=_positive_float,
                        help="share of each GPU's memory (default 0.9, vLLM's)")
    parser.add_argument("--max-model-len", type=int, help="default: the model's max_position_embeddings")
    parser.add_argument("--available-kv-gib", type=_positive_float,
                        help="KV memory vLLM logged ('Available KV cache memory'); skips the estimate")
    parser.add_argument("--enable-prefix-caching", action=argparse.BooleanOptionalAction,
                        help="as vLLM's flag (default: vLLM's for the model, off for hybrids); "
                             "on, hybrid models keep 2 state blocks per request ('align' mode)")
    parser.add_argument("--num-speculative-tokens", type=_non_negative_int, default=0, metavar="N",
                        help="speculative tokens per step (default 0)")
    parser.add_argument("--speculative-method", default="mtp",
                        help="draft method of --num-speculative-tokens (default mtp: the model's "
                             "MTP layers join the KV cache)")
    parser.add_argument("--vllm-version",
                        help="image's vLLM version, e.g. v0.19.1 (default: the project's image.tag "
                             "in Pulumi.yaml, else v0.19.1)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def _error(message: str) -> int:
    print(f"vllm-stack capacity: {message}", file=sys.stderr)
    return 1


def _suggest(name: str, known: list[str], close: list[str]) -> str:
    """Catalog names containing `name` (any case), else difflib's, else all of them."""
    hits = [k for k in known if name.lower() in k.lower()]
    return ", ".join(hits[:4] or close or known)


def _model(args: argparse.Namespace) -> ModelArchitecture | str:
    """The model, or an error message with suggestions."""
    if args.model_config is not None:
        return load_hf_config(args.model_config)  # ConfigError -> finding lines, exit 1
    model = find_model(args.model)
    if model is None:
        close = _suggest(args.model, list(MODELS), suggest_model(args.model))
        return f"unknown model '{args.model}'; did you mean {close}? (or use --model-config PATH)"
    return model


def run(args: argparse.Namespace) -> int:
    model = _model(args)
    if isinstance(model, str):
        return _error(model)
    gpu = find_gpu(args.gpu)
    if gpu is None:
        close = _suggest(args.gpu, list(GPUS), suggest_gpu(args.gpu))
        return _error(f"unknown GPU '{args.gpu}'; did you mean {close}?")
    if args.tp < 1 or args.pp < 1:
        return _error("--tp and --pp must be at least 1")
    if args.gpus is not None and args.tp * args.pp > args.gpus:
        return _error(f"TP {args.tp} x PP {args.pp} needs {args.tp * args.pp} GPUs; --gpus is {args.gpus}")
    if args.gpu_memory_utilization is not None and args.gpu_memory_utilization > 1:
        return _error("--gpu-memory-utilization must be in (0, 1]")
    version = parse_vllm_version(args.vllm_version)
    if args.vllm_version and version is None:
        return _error(f"'{args.vllm_version}' is not a version such as v0.19.1")
    speculative = args.num_speculative_tokens
    result = plan(CapacityInputs(
        model=model, gpu=gpu, tp=args.tp, pp=args.pp, dtype=args.dtype,
        kv_cache_dtype=args.kv_cache_dtype, gpu_memory_utilization=args.gpu_memory_utilization,
        max_model_len=args.max_model_len, available_kv_gib=args.available_kv_gib,
        enable_prefix_caching=args.enable_prefix_caching, num_speculative_tokens=speculative,
        draft_attention_layers=draft_attention_layers(model, args.speculative_method) if speculative else 0,
        vllm_version=version or _pinned_version(args.project_dir),
    )).as_dict()
    ordered = {key: result[key] for key in MAIN_KEYS} | result
    if args.json:
        print(json.dumps(ordered, indent=2))
        return 0
    width = max(map(len, ordered))
    for key, value in ordered.items():
        print(f"{key:<{width}}  {value}")
    if not result["weights_fit"]:
        print("the weights do not fit: more GPUs (--tp), a quantized checkpoint or more memory")
        return 1
    if not result["fits_one_request"]:
        print(f"one request of {result['max_model_len']} tokens does not fit; "
              f"at most {result['max_model_len_that_fits']}")
        return 1
    return 0
