"""KV-cache capacity planner: how vLLM (V1, v0.19) splits one GPU's memory, as pure arithmetic.

vLLM's worker (`vllm/v1/worker/gpu_worker.py`, `determine_available_memory`) computes
    available KV = total memory x gpu_memory_utilization
                   - (weights + torch peak activation + non-torch memory [+ CUDA graphs])
and `vllm/v1/core/kv_cache_utils.py` turns that into blocks. Weights and the KV layout are
exact; the overheads are measured by vLLM at startup, so here they are documented estimates.
`available_kv_gib` overrides the estimate with the figure vLLM logged, to check the rest alone.
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel, ConfigDict, Field

from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.spec import ServingSpec

GIB = 2**30

# vLLM's default --gpu-memory-utilization (EngineArgs / CacheConfig) for the versions we target.
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
# vLLM's default --block-size on CUDA: tokens per KV page.
DEFAULT_BLOCK_SIZE = 16
# Hybrid models grow the attention block in steps of the kernels' alignment (16) until an
# attention page is as large as one layer's linear-attention state (vLLM's
# HybridAttentionMambaModelConfig); the state page is then padded to the same size.
BLOCK_ALIGNMENT = 16

# "torch peak memory increase" of the profile run (a forward pass of max_num_batched_tokens
# dummy tokens plus a sampler pass): 0.45-1.9 GiB in vLLM's DEBUG logs for 2-32B dense models;
# 1.0 GiB reproduces the Qwen3-4B/L4 log in vllm-facts.md (20.24 - 7.49 weights - 11.47 KV).
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
    block_size: int = Field(default=DEFAULT_BLOCK_SIZE, ge=1)
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


def _linear_state_bytes(model: ModelArchitecture, tp: int, compute: str) -> int:
    """One linear-attention layer's state per sequence on one GPU: the short-convolution
    window (kernel - 1 steps of q, k and v, compute dtype) plus the recurrent state
    (value heads x key dim x value dim, state dtype); both sharded over TP."""
    lin = model.linear_attention
    if lin is None:
        return 0
    conv_dim = 2 * lin.num_key_heads * lin.key_head_dim + lin.num_value_heads * lin.value_head_dim
    conv = math.ceil(conv_dim / tp) * (lin.conv_kernel - 1) * _DTYPE_BYTES[compute]
    recurrent = math.ceil(lin.num_value_heads / tp) * lin.key_head_dim * lin.value_head_dim
    return conv + recurrent * lin.state_dtype_bytes


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

    # Per-token KV per GPU: K and V, each PP stage holding its share of the attention layers.
    full_layers = math.ceil((model.full_attention_layers + inputs.draft_attention_layers) / inputs.pp)
    heads_per_gpu = max(1, model.num_key_value_heads // inputs.tp)
    token_layer = 2 * heads_per_gpu * model.head_dim * kv_bytes
    kv_per_token = full_layers * token_layer

    lin_layers = 0 if model.linear_attention is None else math.ceil(model.linear_attention.num_layers / inputs.pp)
    state = _linear_state_bytes(model, inputs.tp, compute)
    block = inputs.block_size
    if state:
        block = BLOCK_ALIGNMENT * math.ceil(state / (BLOCK_ALIGNMENT * token_layer))
        block = max(block, inputs.block_size)
    page = block * token_layer  # one block of one layer; linear states are padded to it

    # vLLM's hybrid grouping (kv_cache_utils._get_kv_cache_groups_uniform_page_size): layers of
    # each type split into groups of `group_size`; one memory pool per group slot.
    counts = [n for n in (full_layers, lin_layers) if n]
    group_size = min(counts)
    if max(counts) < 1.5 * group_size:
        group_size = max(counts)
    attn_groups = math.ceil(full_layers / group_size)
    lin_groups = math.ceil(lin_layers / group_size) if lin_layers else 0
    num_blocks = avail_bytes // (page * group_size)

    def per_request(length: int) -> int:
        return group_size * page * (attn_groups * math.ceil(length / block) + lin_groups)

    concurrency = avail_bytes / per_request(max_len)
    fits_len = 0
    if per_request(1) <= avail_bytes:
        fits_len = (avail_bytes // (group_size * page) - lin_groups) // attn_groups * block
    return CapacityPlan(
        model=model.architecture, gpu=gpu.name, tp=inputs.tp, pp=inputs.pp, dtype=compute,
        kv_cache_dtype=inputs.kv_cache_dtype or "auto", gpu_memory_utilization=util,
        max_model_len=max_len, block_size=block,
        weights_gib_per_gpu=weights, budget_gib=budget, activation_gib=ACTIVATION_PEAK_GIB,
        non_torch_gib=non_torch, cuda_graph_gib=graphs, overhead_gib=overhead,
        available_kv_gib=available, available_kv_from_log=from_log,
        kv_bytes_per_token_per_gpu=kv_per_token, linear_state_bytes_per_seq_per_gpu=lin_layers * state,
        kv_cache_tokens=num_blocks * group_size // full_layers * block if full_layers else 0,
        vllm_logged_kv_tokens=num_blocks // (attn_groups + lin_groups) * block,
        max_concurrency=concurrency, max_model_len_that_fits=min(fits_len, model.max_position_embeddings),
        weights_fit=from_log or available > 0, fits_one_request=concurrency >= 1,
    )


def spec_inputs(spec: ServingSpec) -> CapacityInputs:
    """Planner inputs from a resolved stack (engine flags, image version, draft layers)."""
    engine = spec.settings.engine
    spec_cfg = engine.speculative_config
    draft = spec.model.mtp_layers if spec_cfg is not None and spec_cfg.method.endswith("mtp") else 0
    return CapacityInputs(
        model=spec.model, gpu=spec.gpu, tp=engine.tensor_parallel_size or 1,
        pp=engine.pipeline_parallel_size or 1, dtype=engine.dtype, kv_cache_dtype=engine.kv_cache_dtype,
        quantization=engine.quantization, gpu_memory_utilization=engine.gpu_memory_utilization,
        max_model_len=engine.max_model_len, draft_attention_layers=draft,
        vllm_version=parse_vllm_version(spec.settings.image.tag),
    )


def plan_capacity(spec: ServingSpec) -> CapacityPlan:
    return plan(spec_inputs(spec))
