"""Memory: the weights fit, the KV cache holds one full request (from the capacity planner)."""

from __future__ import annotations

from vllm_serving.findings import Severity, config_key
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
