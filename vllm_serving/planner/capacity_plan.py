"""The capacity planner's answer for one GPU: memory, KV blocks, tokens, concurrency."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from vllm_serving.planner.available_memory import GIB, CudagraphMode
from vllm_serving.planner.encoder_profile import EncoderProfile
from vllm_serving.planner.kv_sizing import MambaCacheMode


class MemoryTerm(BaseModel):
    """One amount vLLM subtracts from the requested memory before sizing the KV cache."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    gib: float
    source: str
    """The vLLM file and function it is read from (paths under the wheel's `vllm/`)."""


ContextLimit = Literal["memory", "model"]


class EncoderPass(BaseModel):
    """The multimodal encoder's profiling pass, one of the activation peak's parts
    (planner/encoder_profile.py): the dummy batch vLLM logs ("Encoder cache will be initialized
    with a budget of N tokens, and profiled with K <modality> items") and its memory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    modality: str
    items: int
    tokens_per_item: int
    encoder_budget: int
    forward_gib: float
    """Torch memory while the encoder runs: the pixel values and its largest stage."""
    kept_gib: float
    """What stays allocated under the language model's dummy run and the sampler."""

    @classmethod
    def of(cls, profile: EncoderProfile | None) -> EncoderPass | None:
        if profile is None:
            return None
        batch = profile.batch
        return cls(modality=batch.item.modality, items=batch.items, tokens_per_item=batch.item.embeds,
                   encoder_budget=batch.encoder_budget, forward_gib=profile.forward_bytes / GIB,
                   kept_gib=profile.kept_bytes / GIB)


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
    vllm_version: str
    """The release the estimate is for (e.g. 0.19.1)."""
    vllm_version_source: str = Field(default="", exclude=True)
    """Where the version came from, in words (the text view; not in `as_dict`, so a stack and
    the same flags give equal figures)."""
    memory_accounting_release: str
    """The read release whose memory accounting applied (the newest not newer than asked)."""
    gpu_total_gib: float
    """Total memory as CUDA reports it: what the utilization multiplies."""
    max_num_batched_tokens: int
    max_num_seqs: int
    cudagraph_mode: CudagraphMode
    weights_gib_per_gpu: float
    draft_weights_gib_per_gpu: float
    budget_gib: float
    """CUDA total x utilization (vLLM's requested memory)."""
    activation_gib: float
    non_torch_gib: float
    cuda_graph_gib: float
    """CUDA graph memory subtracted from the budget (0 where the release captures outside it)."""
    cudagraph_estimate_gib: float
    """vLLM's own estimate of the graphs, subtracted or not."""
    overhead_gib: float
    """Everything subtracted but the weights: activation + non-torch + CUDA graphs."""
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
    sliding_window: int | None = Field(default=None, exclude=True)
    """The window sliding-window layers keep per request (the hybrid KV cache manager); None when
    every attention layer keeps every token. Not in `as_dict` (the JSON views stay as they were)."""
    max_concurrency: float
    max_model_len_that_fits: int
    longest_context_by_memory: int
    """Longest single request the KV cache holds, before the model's position limit."""
    context_limited_by: ContextLimit
    """What bounds max_model_len_that_fits: the KV memory or the model's max_position_embeddings."""
    weights_fit: bool
    fits_one_request: bool
    judged_error: float = 0.0
    """The optimistic error the plan is judged at (error_band.py: the release's measured band,
    widened to all releases' where it has few logs); 0 where the KV memory is given, not estimated."""
    error_band: str = Field(default="", exclude=True)
    """The release's measured error band in words (the text views)."""
    pessimistic_available_kv_gib: float = 0.0
    """The KV memory if vLLM finds as much less than estimated as the judged error: what the
    stack is judged by."""
    pessimistic_max_concurrency: float = 0.0
    pessimistic_max_model_len_that_fits: int = 0
    fits_pessimistic: bool = False
    """One full maxModelLen request fits the pessimistic KV memory too."""
    memory_terms: tuple[MemoryTerm, ...] = Field(default=(), exclude=True)
    """Each subtracted term with its source (`memory_breakdown`; not in `as_dict`)."""
    encoder: EncoderPass | None = Field(default=None, exclude=True)
    """The multimodal encoder's profiling pass, if one runs (part of `activation_gib`; not in `as_dict`)."""

    def as_dict(self) -> dict[str, object]:
        """Display form: GiB to 2 decimals, concurrency to 2 (as vLLM logs it)."""
        out: dict[str, object] = {}
        for name, value in self.model_dump().items():
            out[name] = round(value, 4 if name == "judged_error" else 2) if isinstance(value, float) else value
        return out

    def memory_breakdown(self) -> list[dict[str, object]]:
        """The requested memory, each subtracted term and what remains, GiB to 2 decimals."""
        rows: list[dict[str, object]] = [
            {"name": "requested", "gib": round(self.budget_gib, 2),
             "source": "v1/worker/gpu_worker.py Worker.init_device: CUDA total x gpu_memory_utilization"}]
        rows += [{"name": t.name, "gib": -round(t.gib, 2), "source": t.source} for t in self.memory_terms]
        logged = " - as logged" if self.available_kv_from_log else ""
        rows.append({"name": "available_kv_cache", "gib": round(self.available_kv_gib, 2),
                     "source": "v1/worker/gpu_worker.py Worker.determine_available_memory "
                               f"('Available KV cache memory'){logged}"})
        return rows
