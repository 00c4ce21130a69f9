"""The "Available KV cache memory" a vLLM release will log, as pure arithmetic per release.

Every V1 release sizes the KV cache in `v1/worker/gpu_worker.py` `determine_available_memory`:

    available = requested - weights - torch peak increase - non-torch increase [- CUDA graphs]

What each release counts differs (when NCCL is initialised, whether CUDA graph memory is
estimated and subtracted, the default utilization, the sampler's peak, the batch defaults).
That knowledge is data, read from each release's wheel, in `memory_accounting.json`
(`release_accounting`); this module only applies it. docs/memory-accounting.md explains every
term and its evidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import msgspec

from vllm_serving.catalog.vision import VisionEncoder
from vllm_serving.planner.cudagraph_memory import CudagraphMode as CudagraphMode
from vllm_serving.planner.cudagraph_memory import capture_sizes as capture_sizes
from vllm_serving.planner.cudagraph_memory import cudagraph_bytes
from vllm_serving.planner.encoder_profile import EncoderProfile, encoder_profile
from vllm_serving.planner.mm_dummy_batch import dummy_batch
from vllm_serving.planner.model_shape import ModelShape as ModelShape
from vllm_serving.planner.model_shape import forward_bytes, moe_workspace_per_token
from vllm_serving.planner.release_accounting import ReleaseAccounting, UsageContext, load_accounting
from vllm_serving.planner.release_accounting import batch_defaults as release_batch_defaults
from vllm_serving.planner.release_accounting import parse_version as parse_version
from vllm_serving.planner.release_accounting import resolve_release as resolve_release
from vllm_serving.planner.sampler_peak import (
    ModelKind,
    Sampler,
    SamplerChoice,
    sampler_choice,
    sampler_peak_bytes,
    uses_v2_runner,
)
from vllm_serving.planner.sampler_peak import sampler_bytes_per_logit as sampler_bytes_per_logit

GIB = 2**30
MIB = 2**20


class MemoryInputs(msgspec.Struct, frozen=True):
    """One GPU of a deployment; unset engine flags take the release's defaults."""

    vllm_version: str
    gpu_total_gib: float
    """Total memory as CUDA reports it (`cudaMemGetInfo`), not nvidia-smi's MiB."""
    gpu_name: str
    weights_gib: float
    """Per-GPU weights as vLLM's "Model loading took" counts them (target model)."""
    model: ModelShape
    draft_weights_gib: float = 0.0
    """Speculative draft weights on this GPU, loaded inside the same measurement."""
    gpu_memory_utilization: float | None = None
    tp: int = 1
    pp: int = 1
    """Pipeline stages: each holds 1/pp of the layers (and NCCL starts as with TP > 1)."""
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    usage_context: UsageContext = "openai"
    enforce_eager: bool = False
    cudagraph_mode: CudagraphMode | None = None
    """None: FULL_AND_PIECEWISE (-O2), or none with enforce_eager."""
    max_cudagraph_capture_size: int | None = None
    num_speculative_tokens: int = 0
    sampler: Sampler | None = None
    """The sampler path when known (a log line says it); None: decided from the release, the
    image (`flashinfer_installed`), `env`, the GPU and the architecture (`sampler_peak`)."""
    estimate_cudagraphs: bool | None = None
    """VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS; None: the release's default."""
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    """The server's environment (VLLM_USE_FLASHINFER_SAMPLER, VLLM_USE_V2_MODEL_RUNNER)."""
    flashinfer_installed: bool = True
    """The official image ships FlashInfer; vLLM's v0.10 wheel lists it only as an extra."""
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    """Streaming multiprocessors: the Triton sampler keeps a buffer row per SM."""
    architecture: str | None = None
    """The Hugging Face architecture class: some releases run the v2 model runner for a few."""
    quantized: bool = False
    """Quantized weights (v0.22-v0.23 keep those on the v1 model runner)."""
    compile_cache_warm: bool = False
    """torch.compile's cache already holds this model's kernels (a restart with the cache kept);
    False: a first start, which autotunes kernels inside the profile run's forward pass."""
    vision: VisionEncoder | None = None
    """A vision-language model's encoder: profiled on dummy images first (`encoder_profile`);
    None for a text model or one started with `--language-model-only`."""
    max_model_len: int | None = None
    """The context length: how many dummy items (and video frames) a prompt may hold."""
    mm_limits: Mapping[str, int] = msgspec.field(default_factory=dict)
    """`--limit-mm-per-prompt` counts by modality (unset: 999)."""
    skip_mm_profiling: bool = False
    """`--skip-mm-profiling`: the encoder is not run before the KV cache is sized."""
    mm_encoder_data_parallel: bool = False
    """`--mm-encoder-tp-mode data`: each rank runs the whole encoder on its share of the items."""
    unmodelled_encoder: bool = False
    """The model has a vision tower whose profiling is not modelled (no `vision` facts): said in the plan."""


class Term(msgspec.Struct, frozen=True):
    name: str
    gib: float
    source: str


class MemoryEstimate(msgspec.Struct, frozen=True):
    release: str
    """The read release whose accounting applied (the newest one not newer than asked)."""
    exact_release: bool
    requested_gib: float
    terms: tuple[Term, ...]
    available_kv_gib: float
    max_num_batched_tokens: int
    max_num_seqs: int
    cudagraph_estimate_gib: float
    """Expected CUDA graph memory, subtracted or not (before v0.18 vLLM captures the graphs
    out of the 1 - utilization headroom and estimates nothing)."""
    sampler: SamplerChoice | None = None
    """The sampler the profiling run exercises, and why."""
    encoder: EncoderProfile | None = None
    """The multimodal encoder's profiling (its batch, peak and what it keeps), if it runs."""


def batch_defaults(release: ReleaseAccounting, inputs: MemoryInputs) -> tuple[int, int]:
    """max_num_batched_tokens and max_num_seqs as EngineArgs fills them for this GPU."""
    return release_batch_defaults(
        release, gpu_total_gib=inputs.gpu_total_gib, gpu_name=inputs.gpu_name, usage_context=inputs.usage_context,
        max_num_batched_tokens=inputs.max_num_batched_tokens, max_num_seqs=inputs.max_num_seqs)


def model_kind(inputs: MemoryInputs) -> ModelKind:
    return ModelKind(inputs.architecture, moe=inputs.model.experts_per_token > 0,
                     hybrid=inputs.model.linear_attention_layers > 0, quantized=inputs.quantized)


def resolve_sampler(release: ReleaseAccounting, inputs: MemoryInputs, rows: int) -> SamplerChoice:
    if inputs.sampler is not None:
        return SamplerChoice(inputs.sampler, "given")
    return sampler_choice(release, rows=rows, env=inputs.env, flashinfer_installed=inputs.flashinfer_installed,
                          capability=inputs.compute_capability, kind=model_kind(inputs))


def _encoder(release: ReleaseAccounting, inputs: MemoryInputs, tokens: int, seqs: int,
             runner: str) -> EncoderProfile | None:
    """The encoder's profiling pass, when the model has one and it is not skipped."""
    vision = inputs.vision
    if vision is None or inputs.skip_mm_profiling or inputs.max_model_len is None:
        return None
    batch = dummy_batch(release, vision, max_model_len=inputs.max_model_len, max_num_batched_tokens=tokens,
                        max_num_seqs=seqs, limits=inputs.mm_limits)
    if batch is None:
        return None
    return encoder_profile(release, vision, batch, tp=inputs.tp, dtype_bytes=inputs.model.dtype_bytes,
                           runner="v2" if runner == "v2" else "v1", data_parallel=inputs.mm_encoder_data_parallel,
                           compiled=cudagraph_mode(inputs) != "none")


def _activation_bytes(release: ReleaseAccounting, inputs: MemoryInputs, sampler: Sampler, tokens: int,
                      seqs: int) -> int:
    """Peak of the profiling run: the larger of one layer's forward buffers over all batched
    tokens and the sampler's logits over min(max_num_seqs, tokens) rows (the hidden states of
    every batched token stay alive); where the release keeps the MoE workspaces in its
    workspace manager (v0.13 on), they are still allocated while the sampler runs."""
    shape = inputs.model
    rows = min(seqs, tokens)
    sampler_bytes = sampler_peak_bytes(sampler, rows=rows, vocab=shape.vocab_size, sm_count=inputs.sm_count,
                                       speculative=inputs.num_speculative_tokens > 0)
    sampler_bytes += tokens * shape.hidden_size * shape.dtype_bytes
    if release.raw["moe_workspace_persistent"]:
        sampler_bytes += int(tokens * moe_workspace_per_token(shape, inputs.tp) * shape.dtype_bytes)
    forward = forward_bytes(shape, tokens, inputs.tp)
    model = load_accounting().model
    if cudagraph_mode(inputs) == "none":  # eager: the MLP's Python locals decide what is alive
        if inputs.architecture in model["eager_mlp_keeps_gate_up"]:
            forward += tokens * shape.hidden_size * shape.dtype_bytes
    elif not inputs.compile_cache_warm:
        forward += int(model["cold_compile_benchmark_bytes"])
    return max(forward, sampler_bytes)


def cudagraph_mode(inputs: MemoryInputs) -> CudagraphMode:
    """The graphs captured: none when eager (--enforce-eager or -O0), else the mode asked."""
    if inputs.enforce_eager:
        return "none"
    return inputs.cudagraph_mode or "full_and_piecewise"


def _requested_bytes(release: ReleaseAccounting, inputs: MemoryInputs) -> int:
    util = inputs.gpu_memory_utilization
    if util is None:
        # The extensible KV cache budgets all memory when the flag is unset (CacheConfig.
        # resolved_gpu_memory_utilization) and trims after warmup, from measured memory.
        util = 1.0 if release.raw["extensible_kv_cache"] else float(release.raw["default_gpu_memory_utilization"])
    requested = inputs.gpu_total_gib * GIB * util
    return math.ceil(requested) if release.raw["requested_memory"] == "ceil_total_times_util" else int(requested)


def _cudagraph_term(release: ReleaseAccounting, inputs: MemoryInputs, estimate: int) -> Term:
    mode = release.text("cudagraph_memory")
    source = release.text("cudagraph_memory_source")
    subtracted = mode == "estimated_subtracted"
    if mode != "not_estimated" and inputs.estimate_cudagraphs is not None:
        subtracted = inputs.estimate_cudagraphs
    return Term("cuda_graphs", estimate / GIB if subtracted else 0.0, source)


def _non_torch_gib(release: ReleaseAccounting, inputs: MemoryInputs) -> float:
    """CUDA module loading and library handles (0.06 GiB), NCCL with TP or PP (0.12 more); where
    the release profiles CUDA graphs inside memory_profiling (v0.18-v0.26), what the captures
    leave outside torch's allocator (memory_accounting.json `model.graph_profiling_non_torch_gib`)."""
    model = load_accounting().model
    gib = float(model["non_torch_base_gib"]) + (float(model["nccl_tp_gib"]) if inputs.tp * inputs.pp > 1 else 0.0)
    if release.raw["graph_profiling_in_memory_profiling"] and cudagraph_mode(inputs) != "none":
        residue = model["graph_profiling_non_torch_gib"]
        gib += float(residue["tensor_parallel" if inputs.tp > 1 else "single_gpu"])
    return gib


def estimate_available_memory(inputs: MemoryInputs) -> MemoryEstimate:
    """Each term the release subtracts, with its source, and the KV memory that remains."""
    release, exact = resolve_release(inputs.vllm_version)
    model = load_accounting().model
    tokens, seqs = batch_defaults(release, inputs)
    sampler = resolve_sampler(release, inputs, min(seqs, tokens))
    non_torch = _non_torch_gib(release, inputs)
    runner = "v2" if uses_v2_runner(release, model_kind(inputs), inputs.env) else "v1"
    encoder = _encoder(release, inputs, tokens, seqs, runner)
    language_model = _activation_bytes(release, inputs, sampler.sampler, tokens, seqs)
    # The encoder runs first; its outputs (and the v1 runner's pixel values) stay allocated
    # through the language model's dummy run and the sampler.
    activation = max(encoder.forward_bytes, encoder.kept_bytes + language_model) if encoder else language_model
    graphs = cudagraph_bytes(inputs.model, cudagraph_mode(inputs), tokens=tokens, seqs=seqs, pp=inputs.pp,
                             runner=runner, speculative_tokens=inputs.num_speculative_tokens,
                             max_capture_size=inputs.max_cudagraph_capture_size)
    terms = (
        Term("weights", inputs.weights_gib + inputs.draft_weights_gib, release.text("weights_source")),
        Term("activation_peak", activation / GIB,
             f"{release.text('activation_source')}; sampler {sampler.sampler}: {sampler.why}"
             + (f"; {model['moe_workspace_source']}" if inputs.model.experts_per_token else "")
             + (f"; multimodal encoder: {encoder.detail}" if encoder else "")
             + ("; a vision encoder whose profiling pass is not modelled: its peak is not counted"
                if inputs.unmodelled_encoder and not encoder else "")),
        Term("non_torch", non_torch, f"{release.text('nccl_init_counted_source')}; {model['nccl_tp_derivation']}"),
        _cudagraph_term(release, inputs, graphs),
    )
    requested = _requested_bytes(release, inputs) / GIB
    return MemoryEstimate(
        release=release.name,
        exact_release=exact,
        requested_gib=requested,
        terms=terms,
        available_kv_gib=requested - sum(term.gib for term in terms),
        max_num_batched_tokens=tokens,
        max_num_seqs=seqs,
        cudagraph_estimate_gib=graphs / GIB,
        sampler=sampler,
        encoder=encoder,
    )
