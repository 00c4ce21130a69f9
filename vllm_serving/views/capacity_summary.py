"""`vllm-stack capacity` as a reader sees it: a short answer first, then each figure with its unit.

The answer: whether it fits, the longest context and what limits it (the KV memory or the
model's max_position_embeddings), concurrency at the asked length, weights and KV per GPU. The
detail: each amount vLLM subtracts before sizing the KV cache, with the vLLM file it comes from,
then the KV cache in blocks and tokens - with the two token totals told apart.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from vllm_serving.findings import Finding, tally
from vllm_serving.planner.capacity import CapacityPlan
from vllm_serving.spec import ServingSpec

# Term names in memory_accounting.json -> how the detail labels them.
TERM_LABELS = {
    "weights": "weights{draft}",
    "activation_peak": "activation peak of the profiling run",
    "non_torch": "non-torch memory (CUDA context growth{nccl}{graphs})",
    "cuda_graphs": "CUDA graphs",
}
NON_TORCH_WITHOUT_GRAPHS = 0.18  # the base and NCCL terms; more is the graph-profiling residue
LIMITS = {
    "memory": "the KV cache memory",
    "model": "the model's max_position_embeddings",
}


class Question(msgspec.Struct, frozen=True):
    """What the reader asked: which deployment, and the request length they care about."""

    label: str
    """The model and GPUs in words, e.g. `Qwen3.5-27B on 8 x V100-32GB (TP 8)`."""
    asked_tokens: int
    """--for-context, else max-model-len."""
    asked_concurrency: float
    """Requests of asked_tokens the KV cache holds at once."""
    max_position_embeddings: int
    asked_pessimistic_concurrency: float | None = None
    """The same at the release's worst measured error; None: as the plan's."""
    tp_choice: str | None = None
    """How the TP was chosen when the reader left it open (`the smallest that fits`)."""


def _tokens(n: int) -> str:
    return f"{n:,}"


def stack_question(spec: ServingSpec, plan: CapacityPlan, where: str = "") -> Question:
    """The question a stack asks: its model on its GPUs, at its own max-model-len."""
    engine = spec.settings.engine
    name = spec.settings.model.name or spec.settings.model.config_file or spec.model.architecture
    tp, pp = engine.tensor_parallel_size or 1, engine.pipeline_parallel_size or 1
    label = f"{where}{name} on {tp * pp} x {spec.gpu.name} (TP {tp}" + (f", PP {pp})" if pp > 1 else ")")
    return Question(label=label, asked_tokens=plan.max_model_len, asked_concurrency=plan.max_concurrency,
                    max_position_embeddings=spec.model.max_position_embeddings)


def _model_limit(plan: CapacityPlan, question: Question) -> str:
    return (f"does not fit: the model handles at most {_tokens(question.max_position_embeddings)} tokens "
            f"(its max_position_embeddings; memory alone would hold {_tokens(plan.longest_context_by_memory)}): "
            f"lower max-model-len to {_tokens(question.max_position_embeddings)} - more GPUs or memory cannot "
            "raise the model's limit")


def _fits(plan: CapacityPlan, question: Question, errors: int) -> str:
    """The answer, with the limit that binds and the fix that helps."""
    if not plan.weights_fit:
        return ("does not fit - the weights do not fit each GPU's budget: more GPUs (TP), a quantized "
                "checkpoint or more memory")
    if plan.max_model_len > question.max_position_embeddings:
        return _model_limit(plan, question)
    if not plan.fits_one_request:
        return (f"does not fit: one {_tokens(plan.max_model_len)}-token request needs more KV cache than the GPUs "
                f"have (memory holds at most {_tokens(plan.longest_context_by_memory)} tokens): lower max-model-len "
                "to that, or add GPUs (TP) or memory (utilization)")
    if not plan.fits_pessimistic and plan.judged_error:
        worst = _tokens(plan.pessimistic_max_model_len_that_fits)
        return (f"fits only inside the estimate's error band: at the release's worst measured error "
                f"({plan.judged_error:+.1%}) one request holds at most {worst} tokens (capacity-tight below "
                "says what gives margin)")
    if errors:
        return f"fits in memory, but {errors} rule error(s) below stop the deployment"
    worst = f", also at the release's worst measured error ({plan.judged_error:+.1%})" if plan.judged_error else ""
    return f"fits: the weights and a full {_tokens(plan.max_model_len)}-token request fit{worst}"


def _kv(plan: CapacityPlan) -> str:
    if plan.available_kv_gib < 0:
        return f"no KV cache ({-plan.available_kv_gib:.2f} GiB short)"
    worst = f" (at worst {plan.pessimistic_available_kv_gib:.2f})" if plan.judged_error else ""
    return f"KV cache {plan.available_kv_gib:.2f} GiB{worst}"


def _concurrency(plan: CapacityPlan, question: Question) -> str:
    if question.asked_tokens > question.max_position_embeddings:
        return f"none: the model cannot take a {_tokens(question.asked_tokens)}-token request"
    if question.asked_tokens > plan.max_model_len:  # the server's own limit: it refuses longer requests
        return (f"none: the server refuses requests over max-model-len {_tokens(plan.max_model_len)}; raise it "
                f"to {question.asked_tokens} and the KV cache holds {question.asked_concurrency:.1f} of "
                f"{_tokens(question.asked_tokens)} tokens at once")
    text = f"{question.asked_concurrency:.1f} requests of {_tokens(question.asked_tokens)} tokens at once"
    worst = question.asked_pessimistic_concurrency
    worst = plan.pessimistic_max_concurrency if worst is None else worst
    return text + (f" (at least {worst:.1f} at the worst measured error)" if plan.judged_error else "")


def summary_lines(plan: CapacityPlan, question: Question, findings: Sequence[Finding]) -> list[str]:
    """The answer a reader wants first: fits or not (and why not), the longest context and what
    limits it, concurrency, weights and KV cache per GPU, the error band it is judged by."""
    errors = sum(f.blocks for f in findings)
    limit = LIMITS[plan.context_limited_by]
    longest = (f"{_tokens(plan.max_model_len_that_fits)} tokens, limited by {limit} "
               f"(memory alone holds {_tokens(plan.longest_context_by_memory)}; the model allows "
               f"{_tokens(question.max_position_embeddings)})")
    if plan.max_model_len < plan.max_model_len_that_fits:
        longest += f"; max-model-len {_tokens(plan.max_model_len)} caps what the server accepts"
    tp = f"; TP {plan.tp}: {question.tp_choice}" if question.tp_choice else ""
    lines = [
        f"{question.label}, vLLM v{plan.vllm_version}{tp}",
        f"  Answer:           {_fits(plan, question, errors)}",
        f"  Longest context:  {longest}",
        f"  Concurrency:      {_concurrency(plan, question)}",
        f"  Per {'GPU' if plan.gpu_total_gib else 'CPU'}:          weights {plan.weights_gib_per_gpu:.2f} GiB, "
        f"{_kv(plan)}" + (f"; CUDA total {plan.gpu_total_gib:.2f} GiB" if plan.gpu_total_gib else ""),
    ]
    if plan.judged_error:
        lines.append(f"  Error band:       {plan.error_band}")
    return lines


def _term_label(name: str, plan: CapacityPlan) -> str:
    draft = (f" (model {plan.weights_gib_per_gpu:.2f} + speculative draft {plan.draft_weights_gib_per_gpu:.2f})"
             if plan.draft_weights_gib_per_gpu else "")
    nccl = ", NCCL" if plan.tp * plan.pp > 1 else ""
    graphs = ", what graph profiling leaves" if plan.non_torch_gib > NON_TORCH_WITHOUT_GRAPHS else ""
    label = TERM_LABELS.get(name, name).format(draft=draft, nccl=nccl, graphs=graphs)
    if name == "activation_peak":
        label += f" ({_tokens(plan.max_num_batched_tokens)} batched tokens, {plan.max_num_seqs} seqs)"
    if name == "cuda_graphs" and plan.cuda_graph_gib == 0 and plan.cudagraph_estimate_gib:
        label += f" (vLLM estimates {plan.cudagraph_estimate_gib:.2f}; captured outside the budget)"
    return label


def memory_lines(plan: CapacityPlan) -> list[str]:
    if not plan.gpu_total_gib:  # vLLM's CPU backend: the KV cache is a setting, no device memory
        return [f"Memory: the CPU backend's KV cache is VLLM_CPU_KVCACHE_SPACE, {plan.available_kv_gib:.2f} GiB "
                "(v1/worker/cpu_worker.py CPUWorker.determine_available_memory); weights use host memory"]
    rows = [(f"requested: CUDA total {plan.gpu_total_gib:.2f} GiB x utilization {plan.gpu_memory_utilization:.2f}",
             f"{plan.budget_gib:7.2f}", "v1/worker/gpu_worker.py Worker.init_device")]
    rows += [(f"- {_term_label(term.name, plan)}", f"{term.gib:7.2f}", term.source) for term in plan.memory_terms]
    logged = " (as logged, --available-kv-gib)" if plan.available_kv_from_log else ""
    rows.append((f"= available for the KV cache{logged}", f"{plan.available_kv_gib:7.2f}",
                 "v1/worker/gpu_worker.py Worker.determine_available_memory"))
    width = max(len(label) for label, _, _ in rows)
    head = (f"Memory per GPU, GiB (vLLM v{plan.vllm_version}'s accounting, read from release "
            f"{plan.memory_accounting_release}; version from {plan.vllm_version_source})")
    return [head, *(f"  {label:<{width}}  {gib}  [{_where(source)}]" for label, gib, source in rows)]


def _where(source: str) -> str:
    """The file and function of a term's source (the JSON has the whole sentence)."""
    first, *rest = source.split()
    second = rest[0] if rest and not first.endswith((":", ";", ",")) else ""
    where = f"{first} {second}" if "." in second or "_" in second else first
    return "vllm/" + where.rstrip(":;,")


def kv_lines(plan: CapacityPlan) -> list[str]:
    device = "GPU" if plan.gpu_total_gib else "CPU"  # vLLM's CPU backend has no device memory
    rows = [
        ("model", plan.model),
        (f"{device}s", f"{plan.gpu} x {plan.tp * plan.pp} (TP {plan.tp}, PP {plan.pp})"),
        ("compute dtype / KV cache dtype", f"{plan.dtype} / {plan.kv_cache_dtype}"),
        ("max-model-len", f"{_tokens(plan.max_model_len)} tokens"),
        (f"KV bytes per token per {device}", f"{_tokens(plan.kv_bytes_per_token_per_gpu)} B (attention layers)"),
        ("block size", f"{plan.block_size} tokens; page {_tokens(plan.page_size_bytes)} B per layer"),
        (f"KV cache blocks per {device}", _tokens(plan.num_gpu_blocks)),
        ("blocks one full request holds", _tokens(plan.blocks_per_request)),
        ("tokens the KV cache holds", f"{_tokens(plan.kv_cache_tokens)} (all blocks given to attention)"),
        ("max concurrency at max-model-len",
         f"{plan.max_concurrency:.2f} requests = {_tokens(int(plan.max_concurrency * plan.max_model_len))} tokens "
         "in use"),
    ]
    if plan.linear_state_bytes_per_seq_per_gpu:
        rows[3:3] = [("linear-attention state per request", f"{_tokens(plan.linear_state_bytes_per_seq_per_gpu)} B "
                      f"per GPU; prefix caching {'on' if plan.enable_prefix_caching else 'off'} "
                      f"({plan.mamba_cache_mode} mode)")]
        rows.append(('vLLM will log "GPU KV cache size"', f"{_tokens(plan.vllm_logged_kv_tokens)} tokens"))
    lines = [f"KV cache per {device}", *(f"  {label + ':':<36} {value}" for label, value in rows)]
    if plan.linear_state_bytes_per_seq_per_gpu:
        lines += [
            "  Three token figures, one pool: the KV cache holds the first if every block served attention;",
            "  each request also pins linear-attention state blocks, so concurrency x length is lower; and",
            "  vLLM's log line divides the pool by its layer groups (attention and linear), so it is lower still.",
        ]
    elif plan.sliding_window:
        lines.append(f"  Window layers keep only the last {_tokens(plan.sliding_window)} tokens (+ one step's batch) "
                     "per request, so tokens in use can exceed the tokens the cache holds.")
    elif plan.max_concurrency * plan.max_model_len < plan.kv_cache_tokens:
        lines.append("  Tokens in use at max concurrency stay below what the cache holds: whole blocks per request.")
    return lines


def finding_lines(findings: Sequence[Finding], scope: str) -> list[str]:
    head = f"Rules (as vllm-stack check, {scope}): {tally(findings)}"
    return [head, *(f"  {f.line()}" for f in findings)] if findings else [head.replace(": 0 error(s), 0 warning(s)",
                                                                                        ": no findings")]


def capacity_text(plan: CapacityPlan, question: Question, findings: Sequence[Finding], scope: str) -> str:
    sections = [summary_lines(plan, question, findings), memory_lines(plan), kv_lines(plan),
                finding_lines(findings, scope)]
    return "\n\n".join("\n".join(lines) for lines in sections)
