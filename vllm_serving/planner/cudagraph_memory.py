"""CUDA graph memory as vLLM estimates it before sizing the KV cache (v0.18 on).

`GPUModelRunner.profile_cudagraph_memory` (v1/worker/gpu_model_runner.py) captures the largest
two graphs of each mode into a throw-away pool and extrapolates
`max(first capture per mode) + sum((n - 1) x max(second capture, 1 MiB))`; the v2 runner
(v1/worker/gpu/cudagraph_utils.py) captures every piecewise graph. What vLLM logs grows with the
graphs times the layers, not with the batch's activations: a piecewise size is one CUDA graph per
layer piece, a FULL graph holds every layer's kernels. The cost per layer and graph is fitted on
the logged estimates (memory_accounting.json `model.cudagraph_per_layer_graph_mib`). Capture
sizes are `config/vllm.py` `VllmConfig._set_cudagraph_sizes`'.
"""

from __future__ import annotations

import math
from typing import Literal

from vllm_serving.planner.model_shape import ModelShape
from vllm_serving.planner.release_accounting import load_accounting

MIB = 2**20

CudagraphMode = Literal["none", "piecewise", "full_and_piecewise"]
"""CompilationConfig.cudagraph_mode as -O0 / -O1 / -O2 (the default) set it (config/vllm.py)."""


def capture_sizes(*, tokens: int, seqs: int, speculative_tokens: int = 0,
                  max_capture_size: int | None = None) -> list[int]:
    """vLLM's default cudagraph_capture_sizes (config/vllm.py VllmConfig._set_cudagraph_sizes):
    1, 2, 4, every 8 below 256, then every 16, up to min(seqs x decode length x 2, 512, tokens)."""
    decode_len = 1 + speculative_tokens
    largest = min(max_capture_size or min(seqs * decode_len * 2, 512), tokens)
    sizes = {size for size in (1, 2, 4) if size <= largest}
    if largest >= 8:
        sizes.update(range(8, min(largest + 1, 256), 8))
    if largest >= 256:
        sizes.update(range(256, largest + 1, 16))
    return sorted(sizes)


def cudagraph_bytes(shape: ModelShape, mode: CudagraphMode, *, tokens: int, seqs: int, pp: int, runner: str = "v1",
                    speculative_tokens: int = 0, max_capture_size: int | None = None) -> int:
    """The graphs captured (piecewise sizes, and FULL sizes up to the decode batch) times the
    layers on this GPU, at the per-layer-graph cost the logs show; TP does not divide it."""
    if mode == "none":
        return 0
    sizes = capture_sizes(tokens=tokens, seqs=seqs, speculative_tokens=speculative_tokens,
                          max_capture_size=max_capture_size)
    # FULL decode graphs: from one decode step's tokens up to every sequence's (v1/cudagraph_dispatcher.py)
    decode_len = 1 + speculative_tokens
    full_limit = seqs * decode_len
    full = [size for size in sizes if decode_len <= size <= full_limit] if mode == "full_and_piecewise" else []
    layers = math.ceil(shape.num_layers / pp)
    per = float(load_accounting().model["cudagraph_per_layer_graph_mib"][runner]) * MIB
    return int(per * layers * (len(sizes) + len(full)))
