"""How the model is split over GPUs, and the context length (vllm-facts.md "Tensor parallelism")."""

from __future__ import annotations

from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule, divisors

TP = config_key("engine", "tensorParallelSize")
# extraArgs flags that change the rope and so allow a context beyond max_position_embeddings.
ROPE_FLAGS = ("--rope-scaling", "--rope-theta")


def valid_tp(ctx: Context) -> str:
    """TP sizes up to the host's GPUs that split both the heads and the KV heads."""
    kv = ctx.model.num_key_value_heads
    sizes = [t for t in divisors(ctx.model.num_attention_heads, ctx.settings.hardware.count)
             if kv % t == 0 or t % kv == 0]
    return ", ".join(map(str, sizes))


def _tp_heads(ctx: Context) -> Facts | None:
    heads = ctx.model.num_attention_heads
    if heads % ctx.tp:
        return {"tp": ctx.tp, "heads": heads, "ok": valid_tp(ctx)}
    return None


def _tp_kv_heads(ctx: Context) -> Facts | None:
    kv = ctx.model.num_key_value_heads
    if kv % ctx.tp and ctx.tp % kv:
        return {"tp": ctx.tp, "kv": kv, "ok": valid_tp(ctx)}
    return None


def _tp_linear_heads(ctx: Context) -> Facts | None:
    lin = ctx.model.linear_attention
    if lin is None:
        return None
    bad = [f"{n} {what}" for n, what in ((lin.num_key_heads, "key"), (lin.num_value_heads, "value"))
           if n % ctx.tp]
    if bad:
        return {"tp": ctx.tp, "heads": " and ".join(bad)}
    return None


def _docker(ctx: Context) -> bool:
    """Docker hands the container `gpus_given`; a Kubernetes pod requests exactly TP x PP."""
    return ctx.settings.target.kind == "docker"


def _exceeds_given(ctx: Context) -> Facts | None:
    hw = ctx.settings.hardware
    if not _docker(ctx):
        return None
    need = ctx.tp * ctx.pp
    if hw.gpus_given < need <= hw.count:
        return {"need": need, "tp": ctx.tp, "pp": ctx.pp, "given": hw.gpus_given}
    return None


def _idle(ctx: Context) -> Facts | None:
    if not _docker(ctx):
        return None
    given = ctx.settings.hardware.gpus_given
    need = ctx.tp * ctx.pp
    if need < given:
        return {"need": need, "given": given, "idle": given - need}
    return None


def _exceeds_host(ctx: Context) -> Facts | None:
    count = ctx.settings.hardware.count
    need = ctx.tp * ctx.pp
    if need > count:
        return {"need": need, "tp": ctx.tp, "pp": ctx.pp, "count": count}
    return None


def rope_scaling_set(ctx: Context) -> bool:
    """Rope scaling passed through extraArgs (e.g. --hf-overrides '{"rope_scaling": ...}')."""
    for i, arg in enumerate(ctx.engine.extra_args):
        flag, _, inline = arg.partition("=")
        if flag in ROPE_FLAGS:
            return True
        if flag == "--hf-overrides":
            value = inline or (ctx.engine.extra_args[i + 1] if i + 1 < len(ctx.engine.extra_args) else "")
            if "rope" in value:
                return True
    return ctx.engine.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN") == "1"


def _max_len(ctx: Context) -> Facts | None:
    wanted = ctx.engine.max_model_len
    limit = ctx.model.max_position_embeddings
    if wanted is not None and wanted > limit and not rope_scaling_set(ctx):
        return {"len": wanted, "limit": limit}
    return None


RULES: tuple[Rule, ...] = (
    Rule("tp-heads-indivisible", Severity.ERROR, TP,
         "tensor parallel size {tp} does not divide the model's {heads} attention heads",
         "set engine.tensorParallelSize to one of {ok}",
         "The attention heads divide by the TP size.",
         "vLLM exits: \"Total number of attention heads (N) must be divisible by tensor parallel size (TP)\".",
         "vllm-facts.md, Tensor parallelism", _tp_heads),
    Rule("tp-kv-heads-indivisible", Severity.ERROR, TP,
         "tensor parallel size {tp} neither divides the model's {kv} KV heads nor is a multiple of them",
         "set engine.tensorParallelSize to one of {ok}",
         "KV heads split evenly over TP ranks, or are replicated a whole number of times.",
         "vLLM's QKVParallelLinear fails its divisibility assertion while loading the model.",
         "vllm-facts.md, Tensor parallelism; vllm/model_executor/layers/linear.py QKVParallelLinear",
         _tp_kv_heads),
    Rule("tp-linear-heads-indivisible", Severity.WARNING, TP,
         "tensor parallel size {tp} does not divide the linear-attention {heads} heads",
         "prefer a TP size that divides them; whether vLLM accepts this split is unverified",
         "Gated DeltaNet key/value heads divide by the TP size.",
         "Linear-attention layers shard their heads like attention does; the limit is unverified.",
         "vllm-facts.md, Tensor parallelism (unverified)", _tp_linear_heads),
    Rule("parallel-exceeds-gpus", Severity.ERROR, TP,
         "TP {tp} x PP {pp} needs {need} GPUs but the container gets {given}",
         "give the container {need} GPUs (hardware.deviceIds) or lower the TP/PP sizes",
         "Docker: TP x PP GPUs are given to the container (device ids, else the host count).",
         "vLLM cannot place TP x PP workers on fewer visible GPUs and fails at startup.",
         "vllm-facts.md, Tensor parallelism", _exceeds_given),
    Rule("parallel-gpus-idle", Severity.WARNING, TP,
         "the container gets {given} GPUs but TP x PP uses {need}; {idle} stay idle",
         "set hardware.deviceIds to {need} GPUs, or raise engine.tensorParallelSize",
         "Docker: TP x PP equals the GPUs given (a Kubernetes pod requests exactly TP x PP).",
         "vLLM uses the first TP x PP visible GPUs; the rest are reserved for nothing.",
         "vllm-facts.md, Tensor parallelism", _idle),
    Rule("parallel-exceeds-host", Severity.ERROR, TP,
         "TP {tp} x PP {pp} needs {need} GPUs but the host has {count}",
         "lower the TP/PP sizes to fit {count} GPUs, or span nodes (PP across nodes)",
         "TP x PP does not exceed the host's GPUs (hardware.count).",
         "One server cannot use GPUs another host holds.",
         "vllm-facts.md, Beyond one server", _exceeds_host),
    Rule("max-model-len-exceeds-model", Severity.ERROR, config_key("engine", "maxModelLen"),
         "maxModelLen {len} exceeds the model's max_position_embeddings {limit}",
         "lower engine.maxModelLen to {limit}, or add rope scaling via extraArgs (--hf-overrides)",
         "maxModelLen within max_position_embeddings unless rope scaling is set.",
         "vLLM refuses a longer context than the model was trained for without rope scaling.",
         "vllm/config/model.py _get_and_verify_max_len", _max_len),
)
