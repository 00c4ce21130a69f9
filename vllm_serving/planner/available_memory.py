"""The "Available KV cache memory" a vLLM release will log, as pure arithmetic per release.

Every V1 release sizes the KV cache in `v1/worker/gpu_worker.py` `determine_available_memory`:

    available = requested - weights - torch peak increase - non-torch increase [- CUDA graphs]

What each release counts differs (when NCCL is initialised, whether CUDA graph memory is
estimated and subtracted, the default utilization, the sampler's peak, the batch defaults).
That knowledge is data, read from each release's wheel, in `memory_accounting.json`; this
module only applies it. docs/memory-accounting.md explains every term and its evidence.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

from vllm_serving.planner.model_shape import ModelShape as ModelShape
from vllm_serving.planner.model_shape import forward_bytes

GIB = 2**30
MIB = 2**20

UsageContext = Literal["openai", "llm"]
"""`vllm serve` is "openai" (OPENAI_API_SERVER); the offline `LLM` class is "llm"."""
Sampler = Literal["flashinfer", "triton", "torch_sort"]
CudagraphMode = Literal["none", "piecewise", "full_and_piecewise"]
"""CompilationConfig.cudagraph_mode as -O0 / -O1 / -O2 (the default) set it (config/vllm.py)."""


@dataclass(frozen=True)
class MemoryInputs:
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
    """None: what the release's official image runs by default."""
    estimate_cudagraphs: bool | None = None
    """VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS; None: the release's default."""


@dataclass(frozen=True)
class Term:
    name: str
    gib: float
    source: str


@dataclass(frozen=True)
class MemoryEstimate:
    release: str
    """The read release whose accounting applied (the newest one not newer than asked)."""
    exact_release: bool
    requested_gib: float
    terms: tuple[Term, ...]
    available_kv_gib: float
    max_num_batched_tokens: int
    max_num_seqs: int
    cudagraph_estimate_gib: float
    """Expected CUDA graph memory, subtracted or not (before v0.19 vLLM captures the graphs
    out of the 1 - utilization headroom and estimates nothing)."""


@dataclass(frozen=True)
class BatchDefault:
    min_total_gib: float
    not_names: tuple[str, ...]
    """Device-name substrings the rule excludes (A100s, GB10 Sparks)."""
    openai: tuple[int, int]
    llm: tuple[int, int]


@dataclass(frozen=True)
class ReleaseAccounting:
    version: tuple[int, ...]
    raw: dict[str, Any]
    batch_defaults: tuple[BatchDefault, ...]

    def text(self, key: str) -> str:
        return str(self.raw[key])


@dataclass(frozen=True)
class Accounting:
    releases: tuple[ReleaseAccounting, ...]
    model: dict[str, Any]


_VERSION = re.compile(r"^v?(\d+(?:\.\d+)+)")


def parse_version(tag: str) -> tuple[int, ...] | None:
    """`v0.19.1-cu130`, `0.10.1.1`, `0.20.2+cu129` -> numbers; moving tags (`latest`) -> None."""
    match = _VERSION.match(tag.strip())
    return tuple(int(part) for part in match[1].split(".")) if match else None


@cache
def load_accounting() -> Accounting:
    text = resources.files(__package__).joinpath("memory_accounting.json").read_text()
    data: dict[str, Any] = json.loads(text)
    releases = []
    for name, entry in data["releases"].items():
        # A release whose accounting code is unchanged points at the one it matches; its own
        # keys (what changed between the two) override the matched entry's.
        raw = {**data["releases"][entry["same_as"]], **entry} if "same_as" in entry else entry
        version = parse_version(name)
        assert version is not None, name
        defaults = tuple(
            BatchDefault(
                min_total_gib=float(rule["when"].get("min_total_gib", 0)),
                not_names=tuple(rule["when"].get("not_names", ())),
                openai=(int(rule["openai"][0]), int(rule["openai"][1])),
                llm=(int(rule["llm"][0]), int(rule["llm"][1])),
            )
            for rule in raw["batch_defaults"]
        )
        releases.append(ReleaseAccounting(version, raw, defaults))
    releases.sort(key=lambda release: release.version)
    return Accounting(tuple(releases), data["model"])


def resolve_release(vllm_version: str) -> tuple[ReleaseAccounting, bool]:
    """The newest read release not newer than `vllm_version` (moving tags: the newest)."""
    releases = load_accounting().releases
    wanted = parse_version(vllm_version)
    if wanted is None:
        return releases[-1], False
    older = [release for release in releases if release.version <= wanted]
    if not older:
        oldest = ".".join(map(str, releases[0].version))
        raise ValueError(
            f"vLLM {vllm_version} predates the oldest release whose memory accounting was read "
            f"({oldest}): vllm-serving:image.tag must name v{oldest} or newer"
        )
    return older[-1], older[-1].version == wanted


def batch_defaults(release: ReleaseAccounting, inputs: MemoryInputs) -> tuple[int, int]:
    """max_num_batched_tokens and max_num_seqs as EngineArgs fills them for this GPU."""
    name = inputs.gpu_name.lower()
    rule = next(
        rule
        for rule in release.batch_defaults
        if inputs.gpu_total_gib >= rule.min_total_gib and not any(part in name for part in rule.not_names)
    )
    default_tokens, default_seqs = rule.openai if inputs.usage_context == "openai" else rule.llm
    tokens = inputs.max_num_batched_tokens or default_tokens
    seqs = inputs.max_num_seqs or min(default_seqs, tokens)
    return tokens, seqs


def sampler_bytes_per_logit(sampler: Sampler, rows: int) -> int:
    """Bytes per (row x vocab) element at the sampler's peak: the last [first row count, bytes]
    pair of the sampler the run's rows reach (PyTorch's sort allocates by row count)."""
    steps = load_accounting().model["sampler_bytes_per_logit"][sampler]
    return int(max((step for step in steps if rows >= step[0]), key=lambda step: step[0])[1])


def _activation_bytes(inputs: MemoryInputs, sampler: Sampler, tokens: int, seqs: int) -> int:
    """Peak of the profiling run: the larger of one layer's forward buffers over all batched
    tokens and the sampler's logits over min(max_num_seqs, tokens) rows."""
    shape, model = inputs.model, load_accounting().model
    rows = min(seqs, tokens)
    per_logit = sampler_bytes_per_logit(sampler, rows)
    if inputs.num_speculative_tokens:
        per_logit = max(per_logit, int(model["speculative_sampler_bytes_per_logit"]))
    sampler_bytes = rows * shape.vocab_size * per_logit + tokens * shape.hidden_size * shape.dtype_bytes
    return max(forward_bytes(shape, tokens, inputs.tp), sampler_bytes)


def capture_sizes(inputs: MemoryInputs, tokens: int, seqs: int) -> list[int]:
    """vLLM's default cudagraph_capture_sizes (config/vllm.py VllmConfig._set_cudagraph_sizes)."""
    decode_len = 1 + inputs.num_speculative_tokens
    largest = inputs.max_cudagraph_capture_size or min(seqs * decode_len * 2, 512)
    largest = min(largest, tokens)
    sizes = {size for size in (1, 2, 4) if size <= largest}
    if largest >= 8:
        sizes.update(range(8, min(largest + 1, 256), 8))
    if largest >= 256:
        sizes.update(range(256, largest + 1, 16))
    return sorted(sizes)


def cudagraph_mode(inputs: MemoryInputs) -> CudagraphMode:
    """The graphs captured: none when eager (--enforce-eager or -O0), else the mode asked."""
    if inputs.enforce_eager:
        return "none"
    return inputs.cudagraph_mode or "full_and_piecewise"


def _cudagraph_bytes(inputs: MemoryInputs, tokens: int, seqs: int) -> int:
    """profile_cudagraph_memory: the largest capture's pool plus a floor per further graph.
    The pool holds each layer's piece outputs (qkv, attention output, residual)."""
    mode = cudagraph_mode(inputs)
    if mode == "none":
        return 0
    shape = inputs.model
    sizes = capture_sizes(inputs, tokens, seqs)
    if not sizes:
        return 0
    full_limit = seqs * (1 + inputs.num_speculative_tokens)
    full = [size for size in sizes if size <= full_limit] if mode == "full_and_piecewise" else []
    width = (2 * shape.num_attention_heads + 2 * shape.num_key_value_heads) * shape.head_dim / inputs.tp
    layers = math.ceil(shape.num_layers / inputs.pp)
    first = layers * sizes[-1] * (width + shape.hidden_size) * shape.dtype_bytes
    per_graph = int(load_accounting().model["cudagraph_per_graph_mib"]) * MIB
    return int(first) + per_graph * (len(sizes) - 1 + max(len(full) - 1, 0))


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


def _linear_attention_terms(shape: ModelShape) -> tuple[Term, ...]:
    """Hybrid models' Gated DeltaNet (FLA/Triton) workspaces, outside torch's allocator."""
    if not shape.linear_attention_layers:
        return ()
    model = load_accounting().model
    return (Term("linear_attention_kernels", float(model["linear_attention_non_torch_gib"]),
                 str(model["linear_attention_source"])),)


def estimate_available_memory(inputs: MemoryInputs) -> MemoryEstimate:
    """Each term the release subtracts, with its source, and the KV memory that remains."""
    release, exact = resolve_release(inputs.vllm_version)
    model = load_accounting().model
    tokens, seqs = batch_defaults(release, inputs)
    sampler: Sampler = inputs.sampler or release.raw["sampler"]
    multi_gpu = inputs.tp * inputs.pp > 1
    non_torch = float(model["non_torch_base_gib"]) + (float(model["nccl_tp_gib"]) if multi_gpu else 0.0)
    graphs = _cudagraph_bytes(inputs, tokens, seqs)
    terms = (
        Term("weights", inputs.weights_gib + inputs.draft_weights_gib, release.text("weights_source")),
        Term("activation_peak", _activation_bytes(inputs, sampler, tokens, seqs) / GIB,
             f"{release.text('activation_source')}; {release.text('sampler_source')}"
             + (f"; {model['moe_workspace_source']}" if inputs.model.experts_per_token else "")),
        Term("non_torch", non_torch, f"{release.text('nccl_init_counted_source')}; {model['nccl_tp_derivation']}"),
        _cudagraph_term(release, inputs, graphs),
        *_linear_attention_terms(inputs.model),
    )
    requested = _requested_bytes(release, inputs) / GIB
    return MemoryEstimate(
        release=".".join(map(str, release.version)),
        exact_release=exact,
        requested_gib=requested,
        terms=terms,
        available_kv_gib=requested - sum(term.gib for term in terms),
        max_num_batched_tokens=tokens,
        max_num_seqs=seqs,
        cudagraph_estimate_gib=graphs / GIB if not inputs.enforce_eager else 0.0,
    )
