"""KV-cache capacity planner: how vLLM (V1) splits one GPU's memory, as pure arithmetic.

vLLM's worker (`vllm/v1/worker/gpu_worker.py`, `determine_available_memory`) computes
    available KV = CUDA total x gpu_memory_utilization
                   - (weights + torch peak activation + non-torch memory [+ CUDA graphs])
with terms that differ per release: `available_memory` applies each release's accounting
(`memory_accounting.json`, docs/memory-accounting.md) and `memory_budget` feeds it the stack's
release, model and flags. `vllm/v1/core/kv_cache_utils.py` then turns the memory into blocks
(reproduced in `kv_sizing`). `available_kv_gib` overrides the estimate with the figure vLLM
logged, to check the rest alone.
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel, ConfigDict, Field

from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.planner.available_memory import (
    CudagraphMode,
    MemoryEstimate,
    MemoryInputs,
    estimate_available_memory,
    resolve_release,
)
from vllm_serving.planner.capacity_plan import CapacityPlan as CapacityPlan
from vllm_serving.planner.capacity_plan import EncoderPass, MemoryTerm
from vllm_serving.planner.compute_dtype import DTYPE_BYTES, kv_dtype_bytes
from vllm_serving.planner.compute_dtype import compute_dtype as compute_dtype  # re-exported for the rules
from vllm_serving.planner.cpu_kv_space import CPU_BLOCK_SIZE, kv_space_gib
from vllm_serving.planner.error_band import band_for
from vllm_serving.planner.kv_sizing import KvLayout, default_prefix_caching, kv_layout, linear_state_bytes
from vllm_serving.planner.memory_budget import PINNED_VLLM_VERSION as PINNED_VLLM_VERSION
from vllm_serving.planner.memory_budget import (
    compile_flags,
    draft_weights_gib,
    estimate_cudagraphs_env,
    hybrid_kv_cache_manager,
    language_model_only,
    model_shape,
    multimodal_flags,
    profiled_vision,
    version_for_tag,
)
from vllm_serving.planner.mla_backends import mla_backend, mla_disabled_env, preferred_block_size, uses_mla
from vllm_serving.planner.weights_per_gpu import GpuWeights, weights_per_gpu
from vllm_serving.settings.engine import AUTO_FIT
from vllm_serving.spec import ServingSpec

GIB = 2**30

# vLLM's default --gpu-memory-utilization up to v0.19 (config/cache.py); v0.20 raised it to 0.92
# (memory_accounting.json has each release's).
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:[-.+].*)?$")


def parse_vllm_version(tag: str | None) -> tuple[int, int, int] | None:
    """`v0.19.1`, `v0.19.1-cu130`, `0.20.0` -> (0, 19, 1); moving tags (`latest`) -> None."""
    match = _VERSION.match(tag or "")
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


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
    """Unset: the release's default (0.9 up to v0.19, 0.92 from v0.20)."""
    max_model_len: int | None = Field(default=None, ge=1)
    available_kv_gib: float | None = None
    block_size: int | None = Field(default=None, ge=1)
    """`--block-size`; unset: the attention backend's (16, or an MLA kernel's); a hybrid model
    raises either to fit its state."""
    enable_prefix_caching: bool | None = None
    """`--[no-]enable-prefix-caching`; unset: vLLM's default for the model (off for hybrids)."""
    num_speculative_tokens: int = Field(default=0, ge=0)
    """Speculative tokens per step: each adds a conv-state row and a state block per request."""
    draft_attention_layers: int = Field(default=0, ge=0)
    """Attention layers a speculative draft adds to the KV cache (MTP: the model's MTP layers);
    their weights are loaded beside the target's."""
    max_num_batched_tokens: int | None = Field(default=None, ge=1)
    """`--max-num-batched-tokens`: the profiling run's size; unset: the release's GPU default."""
    max_num_seqs: int | None = Field(default=None, ge=1)
    """`--max-num-seqs`: sampler rows and CUDA graph sizes; unset: the release's GPU default."""
    enforce_eager: bool = False
    """`--enforce-eager`: no CUDA graphs."""
    cudagraph_mode: CudagraphMode | None = None
    """The CUDA graphs -O<level> or --compilation-config ask for; unset: full and piecewise."""
    estimate_cudagraphs: bool | None = None
    """VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS from the env; unset: the release's default."""
    hybrid_kv_cache_manager: bool = True
    """vLLM's hybrid KV cache manager: off with --disable-hybrid-kv-cache-manager (or a KV
    connector or KV events), when sliding-window layers keep every token as full attention does."""
    mla_disabled: bool = False
    """VLLM_MLA_DISABLE=1: an MLA model runs as ordinary attention (per-head K and V)."""
    vllm_version: tuple[int, ...] | None = None
    """Image's vLLM version; unset: the project's pinned release."""
    vllm_version_source: str | None = None
    """Where the version came from, for the reader (image tag, --vllm-version, the pin)."""
    language_model_only: bool = False
    """`--language-model-only` (v0.17 on): a multimodal model's vision tower is not loaded."""
    mm_limits: dict[str, int] = Field(default_factory=dict)
    """`--limit-mm-per-prompt` counts by modality: 0 leaves a modality out of the encoder's profiling."""
    skip_mm_profiling: bool = False
    """`--skip-mm-profiling`: the encoder is not run before the KV cache is sized."""
    mm_encoder_data_parallel: bool = False
    """`--mm-encoder-tp-mode data`: every rank runs the whole encoder on its share of the items."""
    mm_image_max_pixels: int | None = Field(default=None, ge=1)
    """`--mm-processor-kwargs` max_pixels: the image limit the Qwen processors resize to."""
    compile_cache_warm: bool = False
    """torch.compile's cache holds the model's kernels already (a restart); unset: a first start."""
    env: dict[str, str] = Field(default_factory=dict)
    """The server's environment: it picks the sampler (VLLM_USE_FLASHINFER_SAMPLER) and the
    model runner (VLLM_USE_V2_MODEL_RUNNER) the profiling run uses."""


def gpu_weights(inputs: CapacityInputs, compute: str) -> GpuWeights:
    """One GPU's weights per tensor (planner/weights_per_gpu.py): sharding, 16-bit leftovers of
    a quantized checkpoint, KV-head duplication, the rotary cache, the vision tower."""
    return weights_per_gpu(
        inputs.model, tp=inputs.tp, pp=inputs.pp, compute_bytes=DTYPE_BYTES[compute],
        online_fp8=inputs.quantization == "fp8", language_model_only=inputs.language_model_only,
        capability=inputs.gpu.compute_capability)


def _memory(inputs: CapacityInputs, compute: str, weights: GpuWeights) -> MemoryEstimate:
    """vLLM's "Available KV cache memory" for these inputs, term by term."""
    version = inputs.vllm_version or PINNED_VLLM_VERSION
    return estimate_available_memory(MemoryInputs(
        vllm_version=".".join(map(str, version)), gpu_total_gib=inputs.gpu.cuda_memory_gib,
        gpu_name=inputs.gpu.product_label, weights_gib=weights.per_gpu_gib,
        model=model_shape(inputs.model, DTYPE_BYTES[compute]),
        draft_weights_gib=draft_weights_gib(inputs.model, inputs.draft_attention_layers, DTYPE_BYTES[compute],
                                            inputs.tp),
        gpu_memory_utilization=inputs.gpu_memory_utilization, tp=inputs.tp, pp=inputs.pp,
        max_num_batched_tokens=inputs.max_num_batched_tokens, max_num_seqs=inputs.max_num_seqs,
        enforce_eager=inputs.enforce_eager, cudagraph_mode=inputs.cudagraph_mode,
        num_speculative_tokens=inputs.num_speculative_tokens, estimate_cudagraphs=inputs.estimate_cudagraphs,
        env=inputs.env, compute_capability=inputs.gpu.compute_capability, sm_count=inputs.gpu.sm_count,
        architecture=inputs.model.architecture, compile_cache_warm=inputs.compile_cache_warm,
        quantized=inputs.model.quantization is not None or inputs.quantization is not None,
        vision=profiled_vision(inputs.model, inputs.language_model_only, inputs.mm_image_max_pixels),
        max_model_len=inputs.max_model_len or inputs.model.max_position_embeddings,
        mm_limits=inputs.mm_limits, skip_mm_profiling=inputs.skip_mm_profiling,
        mm_encoder_data_parallel=inputs.mm_encoder_data_parallel,
        unmodelled_encoder=bool(inputs.model.vision_params_billion) and not inputs.language_model_only,
    ))


def _block_size(inputs: CapacityInputs, compute: str) -> int | None:
    """The block the attention backend brings: a user's --block-size, else an MLA backend's
    preferred block (platforms/interface.py update_block_size_for_backend), else vLLM's 16."""
    if inputs.block_size is not None or not uses_mla(inputs.model, inputs.mla_disabled):
        return inputs.block_size
    backend = mla_backend(inputs.model, inputs.gpu, compute, inputs.kv_cache_dtype)
    return preferred_block_size(backend) if backend is not None else None


def _layout(inputs: CapacityInputs, compute: str, max_len: int, prefix_caching: bool,
            batched_tokens: int) -> KvLayout:
    return kv_layout(
        inputs.model, tp=inputs.tp, pp=inputs.pp, compute_bytes=DTYPE_BYTES[compute],
        kv_bytes=kv_dtype_bytes(inputs.kv_cache_dtype, compute), max_model_len=max_len,
        prefix_caching=prefix_caching, speculative_tokens=inputs.num_speculative_tokens,
        draft_attention_layers=inputs.draft_attention_layers, block_size=_block_size(inputs, compute),
        mla=uses_mla(inputs.model, inputs.mla_disabled), hybrid_kv_cache_manager=inputs.hybrid_kv_cache_manager,
        max_num_batched_tokens=batched_tokens,
    )


def plan(inputs: CapacityInputs) -> CapacityPlan:
    model, gpu = inputs.model, inputs.gpu
    compute = compute_dtype(model, gpu, inputs.dtype)
    max_len = inputs.max_model_len or model.max_position_embeddings

    weights = gpu_weights(inputs, compute)
    memory = _memory(inputs, compute, weights)
    term = {t.name: t.gib for t in memory.terms}
    from_log = inputs.available_kv_gib is not None
    available = inputs.available_kv_gib if inputs.available_kv_gib is not None else memory.available_kv_gib
    avail_bytes = max(0, int(available * GIB))

    prefix_caching = inputs.enable_prefix_caching
    if prefix_caching is None:
        prefix_caching = default_prefix_caching(model)
    layout = _layout(inputs, compute, max_len, prefix_caching, memory.max_num_batched_tokens)
    lin_layers = 0 if model.linear_attention is None else math.ceil(model.linear_attention.num_layers / inputs.pp)
    state = linear_state_bytes(model, inputs.tp, DTYPE_BYTES[compute], inputs.num_speculative_tokens)
    num_blocks = layout.num_blocks(avail_bytes)
    concurrency = layout.max_concurrency(num_blocks)
    by_memory = layout.longest_request(num_blocks, limit=model.max_position_embeddings)
    # an estimate is judged where the release's logs say it may be off; a given figure is exact
    band = band_for(memory.release)
    judged = 0.0 if from_log or not gpu.cuda_memory_gib else band.judged_optimistic
    worst = available / (1 + judged) if available > 0 else available
    worst_blocks = layout.num_blocks(max(0, int(worst * GIB)))
    worst_concurrency = layout.max_concurrency(worst_blocks)
    worst_fits = min(layout.longest_request(worst_blocks, limit=model.max_position_embeddings),
                     model.max_position_embeddings)
    non_torch = term["non_torch"]
    version = inputs.vllm_version or PINNED_VLLM_VERSION
    return CapacityPlan(
        model=model.architecture, gpu=gpu.name, tp=inputs.tp, pp=inputs.pp, dtype=compute,
        kv_cache_dtype=inputs.kv_cache_dtype or "auto",
        # a CPU target has no device memory (its KV cache is VLLM_CPU_KVCACHE_SPACE): no share of it
        gpu_memory_utilization=round(memory.requested_gib / gpu.cuda_memory_gib, 4) if gpu.cuda_memory_gib else 0.0,
        max_model_len=max_len,
        enable_prefix_caching=prefix_caching, mamba_cache_mode=layout.mamba_cache_mode,
        num_speculative_tokens=inputs.num_speculative_tokens, block_size=layout.block_size,
        vllm_version=".".join(map(str, version)),
        vllm_version_source=inputs.vllm_version_source or (
            "given" if inputs.vllm_version else f"the project's pinned v{'.'.join(map(str, version))}"),
        memory_accounting_release=memory.release + ("" if memory.exact_release else " (nearest older read)"),
        gpu_total_gib=gpu.cuda_memory_gib, max_num_batched_tokens=memory.max_num_batched_tokens,
        max_num_seqs=memory.max_num_seqs, cudagraph_mode=_graph_mode(inputs),
        weights_gib_per_gpu=weights.per_gpu_gib,
        draft_weights_gib_per_gpu=term["weights"] - weights.per_gpu_gib,
        budget_gib=memory.requested_gib, activation_gib=term["activation_peak"], non_torch_gib=non_torch,
        cuda_graph_gib=term["cuda_graphs"], cudagraph_estimate_gib=memory.cudagraph_estimate_gib,
        overhead_gib=term["activation_peak"] + non_torch + term["cuda_graphs"],
        available_kv_gib=available, available_kv_from_log=from_log,
        kv_bytes_per_token_per_gpu=layout.attention_layers * layout.token_bytes,
        linear_state_bytes_per_seq_per_gpu=lin_layers * state,
        page_size_bytes=layout.page_size_bytes, num_gpu_blocks=num_blocks,
        blocks_per_request=layout.blocks_per_request(max_len),
        kv_cache_tokens=num_blocks * layout.group_size // layout.attention_layers * layout.block_size,
        vllm_logged_kv_tokens=vllm_logged_tokens(memory.release, layout, num_blocks, concurrency, max_len),
        sliding_window=layout.sliding_window,
        max_concurrency=concurrency,
        max_model_len_that_fits=min(by_memory, model.max_position_embeddings),
        longest_context_by_memory=by_memory,
        context_limited_by="memory" if by_memory < model.max_position_embeddings else "model",
        weights_fit=from_log or memory.available_kv_gib > 0, fits_one_request=concurrency >= 1,
        judged_error=judged, error_band=band.words() if judged else "", pessimistic_available_kv_gib=worst,
        pessimistic_max_concurrency=worst_concurrency, pessimistic_max_model_len_that_fits=worst_fits,
        fits_pessimistic=worst_concurrency >= 1,
        memory_terms=tuple(MemoryTerm(name=t.name, gib=t.gib, source=t.source) for t in memory.terms),
        encoder=EncoderPass.of(memory.encoder),
    )


def _graph_mode(inputs: CapacityInputs) -> CudagraphMode:
    return "none" if inputs.enforce_eager else inputs.cudagraph_mode or "full_and_piecewise"


def draft_attention_layers(model: ModelArchitecture, method: str | None) -> int:
    """Attention layers a speculative method adds to the target's KV cache: an MTP draft
    (`mtp`, and the older per-model names such as `qwen3_next_mtp`) runs the model's own MTP
    layers; other methods' drafts are not in the catalog and count as none."""
    return model.mtp_layers if method is not None and method.endswith("mtp") else 0


def spec_inputs(spec: ServingSpec) -> CapacityInputs:
    """Planner inputs from a resolved stack (engine flags, image version, draft layers)."""
    engine = spec.settings.engine
    spec_cfg = engine.speculative_config
    tag = spec.settings.image.tag
    version, version_source = version_for_tag(tag)
    eager, graphs = compile_flags(tag, engine.extra_args)
    multimodal = multimodal_flags(tag, engine.extra_args)
    cpu = not spec.settings.hardware.uses_gpus  # the CPU backend's KV cache is a setting, not an estimate
    return CapacityInputs(
        model=spec.model, gpu=spec.gpu, tp=engine.tensor_parallel_size or 1,
        pp=engine.pipeline_parallel_size or 1, dtype=engine.dtype, kv_cache_dtype=engine.kv_cache_dtype,
        quantization=engine.quantization, gpu_memory_utilization=engine.gpu_memory_utilization,
        max_model_len=engine.max_model_len if engine.max_model_len != AUTO_FIT else None,
        enable_prefix_caching=engine.enable_prefix_caching,
        num_speculative_tokens=spec_cfg.num_speculative_tokens if spec_cfg is not None else 0,
        draft_attention_layers=draft_attention_layers(spec.model, spec_cfg.method if spec_cfg else None),
        max_num_batched_tokens=engine.max_num_batched_tokens, max_num_seqs=engine.max_num_seqs,
        enforce_eager=eager, cudagraph_mode=graphs, estimate_cudagraphs=estimate_cudagraphs_env(engine.env),
        hybrid_kv_cache_manager=hybrid_kv_cache_manager(tag, engine.extra_args),
        mla_disabled=mla_disabled_env(engine.env),
        vllm_version=version, vllm_version_source=version_source,
        language_model_only=language_model_only(tag, engine.extra_args), env=dict(engine.env),
        mm_limits=dict(multimodal.limits), skip_mm_profiling=multimodal.skip_profiling,
        mm_encoder_data_parallel=multimodal.encoder_data_parallel, mm_image_max_pixels=multimodal.image_max_pixels,
        available_kv_gib=kv_space_gib(engine.env) if cpu else None, block_size=CPU_BLOCK_SIZE if cpu else None,
    )


def plan_capacity(spec: ServingSpec) -> CapacityPlan:
    inputs = spec_inputs(spec)
    return fit_max_model_len(inputs) if spec.settings.engine.max_model_len == AUTO_FIT else plan(inputs)


def fit_max_model_len(inputs: CapacityInputs) -> CapacityPlan:
    """`--max-model-len -1`: the model's own length when one request of it fits the KV cache, else
    the longest that does (v1/core/kv_cache_utils.py `_auto_fit_max_model_len`)."""
    first = plan(inputs.model_copy(update={"max_model_len": None}))
    if first.fits_one_request or first.longest_context_by_memory <= 0:
        return first
    return plan(inputs.model_copy(update={"max_model_len": first.longest_context_by_memory}))


def vllm_logged_tokens(release: str, layout: KvLayout, num_blocks: int, concurrency: float, max_len: int) -> int:
    """vLLM's "GPU KV cache size: N tokens", as the release computes it (memory_accounting.json
    `logged_kv_tokens`): blocks per group up to v0.20.0, concurrency x max-model-len from v0.20.2."""
    rule = resolve_release(release)[0].raw.get("logged_kv_tokens", "blocks_per_group")
    if rule == "concurrency_x_max_model_len":
        return int(concurrency * max_len)
    return layout.logged_tokens(num_blocks)
