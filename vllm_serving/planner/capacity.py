"""KV-cache capacity planner: how vLLM (V1, v0.19) splits one GPU's memory, as pure arithmetic.

vLLM's worker (`vllm/v1/worker/gpu_worker.py`, `determine_available_memory`) computes
    available KV = total memory x gpu_memory_utilization
                   - (weights + torch peak activation + non-torch memory [+ CUDA graphs])
and `vllm/v1/core/kv_cache_utils.py` turns that into blocks (reproduced in `kv_sizing`).
Weights and the KV layout are exact; the overheads are measured by vLLM at startup, so here
they are documented estimates.
`available_kv_gib` overrides the estimate with the figure vLLM logged, to check the rest alone.
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel, ConfigDict, Field

from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.planner.kv_sizing import (
    MambaCacheMode,
    default_prefix_caching,
    kv_layout,
    linear_state_bytes,
)
from vllm_serving.spec import ServingSpec

GIB = 2**30

# vLLM's default --gpu-memory-utilization (EngineArgs / CacheConfig) for the versions we target.
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
# The vLLM release whose KV arithmetic kv_sizing reproduces, and the project's pin
# (Pulumi.yaml image.tag): what `capacity` assumes when no version is given.
PINNED_VLLM_VERSION = (0, 19, 1)

# "torch peak memory increase" of the profile run (a forward pass of max_num_batched_tokens
# dummy tokens plus a sampler pass): 0.45-1.9 GiB in vLLM's DEBUG logs for 2-32B dense models;
# 1.0 GiB reproduces a Qwen3-4B/L4 start-up log (20.24 - 7.49 weights - 11.47 KV).
ACTIVATION_PEAK_GIB = 1.0
# "non-torch forward increase memory" (CUDA context growth, cuBLAS workspaces): 0.02-0.25 GiB
# on one GPU; NCCL buffers and custom all-reduce add 0.5-0.75 GiB with TP/PP > 1.
NON_TORCH_GIB_SINGLE_GPU = 0.2
NON_TORCH_GIB_MULTI_GPU = 0.6
# Gated DeltaNet models: the FLA/Triton kernels' workspaces show up as non-torch memory,
# 1.8 GiB (v0.17.1) to 3.8 GiB (v0.18.0, incl. ~1 GiB vision-encoder profiling) in one
# published Qwen3.5 DEBUG log. 2.0 GiB is a middle estimate, added on top of the above.
LINEAR_ATTENTION_NON_TORCH_GIB = 2.0
# From v0.21 vLLM profiles CUDA graphs before sizing the KV cache (VLLM_MEMORY_PROFILER_
# ESTIMATE_CUDAGRAPHS=1 by default) and logs "Estimated CUDA graph memory: 0.3-1.6 GiB";
# earlier versions capture the graphs afterwards, out of the (1 - utilization) headroom.
CUDA_GRAPH_GIB = 1.0
CUDA_GRAPH_PROFILED_FROM = (0, 21, 0)

_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
_FP8 = ("fp8", "fp8_e4m3", "fp8_e5m2")


_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:[-.+].*)?$")


def parse_vllm_version(tag: str | None) -> tuple[int, int, int] | None:
    """`v0.19.1`, `v0.19.1-cu130`, `0.20.0` -> (0, 19, 1); moving tags (`latest`) -> None."""
    match = _VERSION.match(tag or "")
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def compute_dtype(model: ModelArchitecture, gpu: GpuSpec, dtype: str | None) -> str:
    """The dtype vLLM computes in: `auto` takes the checkpoint's, falling back to float16
    where the GPU has no bfloat16 (and float32 checkpoints are downcast, as vLLM does)."""
    if dtype in (None, "auto"):
        wanted = "float16" if model.weights_dtype == "float16" else "bfloat16"
        return wanted if gpu.supports_bf16 or wanted == "float16" else "float16"
    return {"half": "float16", "float": "float32"}.get(dtype, dtype)


def kv_dtype_bytes(kv_cache_dtype: str | None, compute: str) -> int:
    if kv_cache_dtype in _FP8:
        return 1
    if kv_cache_dtype in (None, "auto"):
        return _DTYPE_BYTES[compute]
    return _DTYPE_BYTES[kv_cache_dtype]


class CapacityInputs(BaseModel):
    """What the planner needs; unset engine flags take vLLM's defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    model: ModelArchitecture
    gpu: GpuSpec
    tp: int = Field(default=1, ge=1)
    pp: int = Field(default=1, ge=1)
    dtype: str | None = None
    kv_cache_dtype: str | None = None
    quantization: str | None = None
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    max_model_len: int | None = Field(default=None, ge=1)
    available_kv_gib: float | None = None
    block_size: int | None = Field(default=None, ge=1)
    """`--block-size`; unset: vLLM's 16 (a hybrid model raises either to fit its state)."""
    enable_prefix_caching: bool | None = None
    """`--[no-]enable-prefix-caching`; unset: vLLM's default for the model (off for hybrids)."""
    num_speculative_tokens: int = Field(default=0, ge=0)
    """Speculative tokens per step: each adds a conv-state row and a state block per request."""
    draft_attention_layers: int = Field(default=0, ge=0)
    """Attention layers a speculative draft adds to the KV cache (MTP: the model's MTP layers)."""
    vllm_version: tuple[int, int, int] | None = None
    """Image's vLLM version; unknown counts as new (CUDA graphs profiled, the safer estimate)."""


class CapacityPlan(BaseModel):
    """The planner's figures for one GPU (every GPU of a TP/PP group holds the same share)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    gpu: str
    tp: int
    pp: int
    dtype: str
    kv_cache_dtype: str
    gpu_memory_utilization: float
    max_model_len: int
    enable_prefix_caching: bool
    mamba_cache_mode: MambaCacheMode
    """How linear-attention states are cached: `align` (prefix caching on) or `none`."""
    num_speculative_tokens: int
    block_size: int
    weights_gib_per_gpu: float
    budget_gib: float
    activation_gib: float
    non_torch_gib: float
    cuda_graph_gib: float
    overhead_gib: float
    available_kv_gib: float
    available_kv_from_log: bool
    kv_bytes_per_token_per_gpu: int
    linear_state_bytes_per_seq_per_gpu: int
    """One copy of every linear-attention layer's state (unpadded) for one sequence."""
    page_size_bytes: int
    """One block of one layer; every group's pages have this size."""
    num_gpu_blocks: int
    blocks_per_request: int
    """Blocks one max_model_len request holds across the layer groups (vLLM's concurrency divisor)."""
    kv_cache_tokens: int
    """Tokens of KV the pool holds if all of it serves attention (linear states excluded)."""
    vllm_logged_kv_tokens: int
    """What vLLM logs as "GPU KV cache size": for hybrids the pool divided by the layer groups."""
    max_concurrency: float
    max_model_len_that_fits: int
    weights_fit: bool
    fits_one_request: bool

    def as_dict(self) -> dict[str, object]:
        """Display form: GiB to 2 decimals, concurrency to 2 (as vLLM logs it)."""
        out: dict[str, object] = {}
        for name, value in self.model_dump().items():
            out[name] = round(value, 2) if isinstance(value, float) else value
        return out


def _weights_gib(inputs: CapacityInputs, compute: str) -> float:
    model = inputs.model
    total = model.total_weights_gib
    if model.quantization is None:
        # Unquantized checkpoints load in the compute dtype; --quantization fp8 halves them.
        target = 1 if inputs.quantization == "fp8" else _DTYPE_BYTES[compute]
        total *= target / _DTYPE_BYTES[model.weights_dtype]
    return total / (inputs.tp * inputs.pp)


def plan(inputs: CapacityInputs) -> CapacityPlan:
    model, gpu = inputs.model, inputs.gpu
    compute = compute_dtype(model, gpu, inputs.dtype)
    kv_bytes = kv_dtype_bytes(inputs.kv_cache_dtype, compute)
    util = inputs.gpu_memory_utilization or DEFAULT_GPU_MEMORY_UTILIZATION
    max_len = inputs.max_model_len or model.max_position_embeddings

    weights = _weights_gib(inputs, compute)
    budget = gpu.memory_gib * util
    multi = inputs.tp * inputs.pp > 1
    non_torch = NON_TORCH_GIB_MULTI_GPU if multi else NON_TORCH_GIB_SINGLE_GPU
    if model.linear_attention is not None:
        non_torch += LINEAR_ATTENTION_NON_TORCH_GIB
    new_profiler = inputs.vllm_version is None or inputs.vllm_version >= CUDA_GRAPH_PROFILED_FROM
    graphs = CUDA_GRAPH_GIB if new_profiler else 0.0
    overhead = ACTIVATION_PEAK_GIB + non_torch + graphs
    from_log = inputs.available_kv_gib is not None
    available = inputs.available_kv_gib if from_log else budget - weights - overhead
    assert available is not None
    avail_bytes = max(0, int(available * GIB))

    prefix_caching = inputs.enable_prefix_caching
    if prefix_caching is None:
        prefix_caching = default_prefix_caching(model)
    layout = kv_layout(
        model, tp=inputs.tp, pp=inputs.pp, compute_bytes=_DTYPE_BYTES[compute], kv_bytes=kv_bytes,
        max_model_len=max_len, prefix_caching=prefix_caching,
        speculative_tokens=inputs.num_speculative_tokens,
        draft_attention_layers=inputs.draft_attention_layers, block_size=inputs.block_size,
    )
    # Per-token KV per GPU: K and V, each PP stage holding its share of the attention layers.
    full_layers = math.ceil((model.full_attention_layers + inputs.draft_attention_layers) / inputs.pp)
    lin_layers = 0 if model.linear_attention is None else math.ceil(model.linear_attention.num_layers / inputs.pp)
    state = linear_state_bytes(model, inputs.tp, _DTYPE_BYTES[compute], inputs.num_speculative_tokens)
    num_blocks = layout.num_blocks(avail_bytes)
    per_request = layout.blocks_per_request(max_len)
    concurrency = layout.max_concurrency(num_blocks)
    return CapacityPlan(
        model=model.architecture, gpu=gpu.name, tp=inputs.tp, pp=inputs.pp, dtype=compute,
        kv_cache_dtype=inputs.kv_cache_dtype or "auto", gpu_memory_utilization=util,
        max_model_len=max_len,
        enable_prefix_caching=prefix_caching, mamba_cache_mode=layout.mamba_cache_mode,
        num_speculative_tokens=inputs.num_speculative_tokens, block_size=layout.block_size,
        weights_gib_per_gpu=weights, budget_gib=budget, activation_gib=ACTIVATION_PEAK_GIB,
        non_torch_gib=non_torch, cuda_graph_gib=graphs, overhead_gib=overhead,
        available_kv_gib=available, available_kv_from_log=from_log,
        kv_bytes_per_token_per_gpu=full_layers * layout.token_bytes,
        linear_state_bytes_per_seq_per_gpu=lin_layers * state,
        page_size_bytes=layout.page_size_bytes, num_gpu_blocks=num_blocks, blocks_per_request=per_request,
        kv_cache_tokens=num_blocks * layout.group_size // full_layers * layout.block_size,
        vllm_logged_kv_tokens=layout.logged_tokens(num_blocks),
        max_concurrency=concurrency,
        max_model_len_that_fits=min(layout.longest_request(num_blocks), model.max_position_embeddings),
        weights_fit=from_log or available > 0, fits_one_request=concurrency >= 1,
    )


def draft_attention_layers(model: ModelArchitecture, method: str | None) -> int:
    """Attention layers a speculative method adds to the target's KV cache: an MTP draft
    (`mtp`, and the older per-model names such as `qwen3_next_mtp`) runs the model's own MTP
    layers; other methods' drafts are not in the catalog and count as none."""
    return model.mtp_layers if method is not None and method.endswith("mtp") else 0


def spec_inputs(spec: ServingSpec) -> CapacityInputs:
    """Planner inputs from a resolved stack (engine flags, image version, draft layers)."""
    engine = spec.settings.engine
    spec_cfg = engine.speculative_config
    return CapacityInputs(
        model=spec.model, gpu=spec.gpu, tp=engine.tensor_parallel_size or 1,
        pp=engine.pipeline_parallel_size or 1, dtype=engine.dtype, kv_cache_dtype=engine.kv_cache_dtype,
        quantization=engine.quantization, gpu_memory_utilization=engine.gpu_memory_utilization,
        max_model_len=engine.max_model_len, enable_prefix_caching=engine.enable_prefix_caching,
        num_speculative_tokens=spec_cfg.num_speculative_tokens if spec_cfg is not None else 0,
        draft_attention_layers=draft_attention_layers(spec.model, spec_cfg.method if spec_cfg else None),
        vllm_version=parse_vllm_version(spec.settings.image.tag),
    )


def plan_capacity(spec: ServingSpec) -> CapacityPlan:
    return plan(spec_inputs(spec))
