"""Memory: the weights fit, the KV cache holds one full request (from the capacity planner),
and still does at the release's worst measured error; capacity.minConcurrency is met there."""

from __future__ import annotations

from vllm_serving.findings import Severity, config_key
from vllm_serving.planner.capacity import spec_inputs
from vllm_serving.planner.margin import context_for, utilization_for
from vllm_serving.rules.base import Context, Facts, Rule, gib

UTIL = config_key("engine", "gpuMemoryUtilization")
HIGH_UTILIZATION = 0.95


def _weights(ctx: Context) -> Facts | None:
    plan = ctx.plan
    if plan.weights_fit:
        return None
    return {
        "weights": gib(plan.weights_gib_per_gpu), "overhead": gib(plan.overhead_gib),
        "budget": gib(plan.budget_gib), "memory": gib(plan.gpu_total_gib),
        "util": plan.gpu_memory_utilization, "gpus": plan.tp * plan.pp,
    }


def _kv(ctx: Context) -> Facts | None:
    plan = ctx.plan
    if not plan.weights_fit or plan.fits_one_request:
        return None
    return {
        "len": plan.max_model_len, "kv": gib(plan.available_kv_gib),
        "tokens": plan.kv_cache_tokens, "fits": plan.max_model_len_that_fits,
    }


def _margin(ctx: Context, requests: float) -> str:
    """The change that gives the pessimistic plan `requests` full requests, in words."""
    inputs = spec_inputs(ctx.spec)
    fixes = []
    util = utilization_for(inputs, ctx.plan, requests)
    if util is not None:
        fixes.append(f"raise engine.gpuMemoryUtilization to {util:.2f}")
    length = context_for(inputs, ctx.plan, requests)
    if length is not None and length < ctx.plan.max_model_len:
        fixes.append(f"lower engine.maxModelLen to {length}")
    fixes.append("add GPUs (engine.tensorParallelSize)")
    return ", or ".join(fixes)


def _tight(ctx: Context) -> Facts | None:
    plan = ctx.plan
    if not plan.weights_fit or not plan.fits_one_request or plan.fits_pessimistic:
        return None
    return {"len": plan.max_model_len, "kv": gib(plan.available_kv_gib),
            "worst": gib(plan.pessimistic_available_kv_gib), "band": plan.error_band,
            "fits": plan.pessimistic_max_model_len_that_fits, "margin": _margin(ctx, 1)}


def _min_concurrency(ctx: Context) -> Facts | None:
    wanted = ctx.settings.capacity.min_concurrency
    plan = ctx.plan
    if wanted is None or not plan.weights_fit or plan.pessimistic_max_concurrency >= wanted:
        return None
    return {"want": f"{wanted:g}", "len": plan.max_model_len, "got": f"{plan.pessimistic_max_concurrency:.2f}",
            "expected": f"{plan.max_concurrency:.2f}", "band": plan.error_band or "the given KV memory",
            "margin": _margin(ctx, wanted)}


def _high(ctx: Context) -> Facts | None:
    util = ctx.engine.gpu_memory_utilization
    if util is not None and util > HIGH_UTILIZATION:
        return {"util": util}
    return None


RULES: tuple[Rule, ...] = (
    Rule("weights-exceed-budget", Severity.ERROR, UTIL,
         "weights need {weights} GiB per GPU plus ~{overhead} GiB overhead, over the {budget} GiB "
         "budget ({memory} GiB x {util}) of each of {gpus} GPU(s)",
         "raise engine.tensorParallelSize (more GPUs), use a quantized checkpoint, or raise "
         "engine.gpuMemoryUtilization",
         "Weights per GPU plus activation and non-torch overheads fit memory x utilization.",
         "vLLM loads the weights, profiles, finds no memory for the KV cache and exits (\"No available "
         "memory for the cache blocks\").",
         "vllm_serving/planner/capacity.py; vllm/v1/worker/gpu_worker.py Worker.determine_available_memory; "
         "vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory", _weights),
    Rule("kv-cache-too-small", Severity.ERROR, config_key("engine", "maxModelLen"),
         "the KV cache (~{kv} GiB per GPU, ~{tokens} tokens) cannot hold one request of "
         "maxModelLen {len} tokens",
         "lower engine.maxModelLen to at most {fits}, or add GPUs / raise gpuMemoryUtilization / "
         "use kvCacheDtype fp8 where supported",
         "The KV cache holds at least one full maxModelLen request.",
         "vLLM refuses to start: \"... is larger than the maximum number of tokens that can be "
         "stored in KV cache\".",
         "vllm_serving/planner/kv_sizing.py; vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory", _kv),
    Rule("capacity-tight", Severity.WARNING, config_key("engine", "maxModelLen"),
         "one request of maxModelLen {len} tokens fits the estimated KV cache ({kv} GiB per GPU) but not what "
         "vLLM may find at the release's worst measured error ({worst} GiB: {band}); at that error the "
         "longest request is {fits} tokens",
         "{margin}",
         "The KV cache holds one full maxModelLen request even if vLLM finds as little memory as the "
         "release's most optimistic logged estimate implies.",
         "Inside the estimate's error band vLLM may refuse to start (\"... larger than the maximum number of "
         "tokens that can be stored in KV cache\").",
         "vllm_serving/planner/error_band.py; tests/fixtures/startup_logs; "
         "vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory", _tight),
    Rule("capacity-below-min-concurrency", Severity.ERROR, config_key("capacity", "minConcurrency"),
         "capacity.minConcurrency is {want} requests of {len} tokens, but the KV cache holds {got} at the "
         "release's worst measured error ({expected} as estimated; {band})",
         "{margin}, or lower capacity.minConcurrency",
         "The pessimistic plan holds capacity.minConcurrency full maxModelLen requests at once.",
         "Requests beyond what the KV cache holds wait or are preempted: the promised concurrency "
         "is not there (vllm:num_requests_waiting grows).",
         "vllm_serving/planner/capacity.py; vllm/v1/core/kv_cache_utils.py "
         "get_max_concurrency_for_kv_cache_config", _min_concurrency),
    Rule("gpu-memory-utilization-high", Severity.WARNING, UTIL,
         "gpuMemoryUtilization {util} leaves under 5% of each GPU for CUDA graphs, NCCL and "
         "other processes",
         "keep it at 0.95 or below unless startup logs show the headroom is enough",
         "gpuMemoryUtilization above 0.95 (values outside (0, 1] are config errors).",
         "v0.19.1 captures CUDA graphs after sizing the KV cache, outside the budget; too little "
         "headroom OOMs at capture or under load.",
         "vllm/envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS (off in v0.19.1); "
         "vllm/v1/worker/gpu_worker.py Worker.determine_available_memory", _high),
)
