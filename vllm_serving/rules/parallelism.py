"""How the model is split over GPUs, and the context length."""

from __future__ import annotations

from vllm_serving.engine import release_facts
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule, divisors
from vllm_serving.settings.engine import AUTO_FIT

TP = config_key("engine", "tensorParallelSize")
# VLLM_ALLOW_LONG_MAX_MODEL_LEN values vLLM reads as on (envs.py).
ENV_TRUE = ("1", "true")


def _linear_heads(ctx: Context) -> tuple[tuple[int, str], ...]:
    lin = ctx.model.linear_attention
    return () if lin is None else ((lin.num_key_heads, "key"), (lin.num_value_heads, "value"))


def valid_tp(ctx: Context) -> str:
    """TP sizes up to the host's GPUs that split the heads, the KV heads (or replicate them) and
    any linear-attention heads."""
    kv = ctx.model.num_key_value_heads
    sizes = [t for t in divisors(ctx.model.num_attention_heads, ctx.settings.hardware.count)
             if (kv % t == 0 or t % kv == 0) and all(n % t == 0 for n, _ in _linear_heads(ctx))]
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
    bad = [f"{n} {what}" for n, what in _linear_heads(ctx) if n % ctx.tp]
    if bad:
        return {"tp": ctx.tp, "heads": " and ".join(bad), "ok": valid_tp(ctx)}
    return None


def _docker(ctx: Context) -> bool:
    """Docker hands the container `gpus_given`; a Kubernetes pod requests exactly TP x PP."""
    return ctx.settings.target.kind == "docker"


def _layout(ctx: Context) -> str:
    """`TP 4 x PP 1`, with ` x DP n` when the server runs several data-parallel engines."""
    dp = ctx.engine.data_parallel_size or 1
    return f"TP {ctx.tp} x PP {ctx.pp}" + (f" x DP {dp}" if dp > 1 else "")


def _exceeds_given(ctx: Context) -> Facts | None:
    hw = ctx.settings.hardware
    if not _docker(ctx):
        return None
    need = ctx.engine.gpus_needed
    if hw.gpus_given < need <= hw.count:
        return {"need": need, "layout": _layout(ctx), "given": hw.gpus_given}
    return None


def _idle(ctx: Context) -> Facts | None:
    if not _docker(ctx):
        return None
    given = ctx.settings.hardware.gpus_given
    need = ctx.engine.gpus_needed
    if need < given:
        return {"need": need, "given": given, "idle": given - need, "layout": _layout(ctx)}
    return None


def _exceeds_host(ctx: Context) -> Facts | None:
    if ctx.settings.target.kind == "kubernetes" and ctx.settings.kubernetes.nodes > 1:
        return None  # a server across nodes: the multi-node rules check the split (multi_node.py)
    count = ctx.settings.hardware.count
    need = ctx.engine.gpus_needed
    if need > count:
        return {"need": need, "layout": _layout(ctx), "count": count}
    return None


def long_len_allowed(ctx: Context) -> bool:
    """VLLM_ALLOW_LONG_MAX_MODEL_LEN as envs.py reads it ("1" or "true", any case): vLLM then only
    warns about a maxModelLen past the derived one."""
    allow = ctx.engine.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN")
    return allow is not None and allow.strip().lower() in ENV_TRUE


def _max_len(ctx: Context) -> Facts | None:
    wanted = ctx.engine.max_model_len
    derived = ctx.derived_max_len
    if wanted is None or wanted == AUTO_FIT or derived is None or wanted <= derived.tokens or long_len_allowed(ctx):
        return None
    original = ctx.model.max_position_embeddings
    factor = -(-wanted // original)  # the YaRN factor that would stretch the trained length enough
    scaling = (f'{{"rope_scaling": {{"rope_type": "yarn", "factor": {factor}, '
               f'"original_max_position_embeddings": {original}}}}}')
    multimodal = ctx.model.architecture in (release_facts.models(ctx.release).multimodal_architectures or ())
    if multimodal:
        scaling = f'{{"text_config": {scaling}}}'
    return {"len": wanted, "limit": derived.tokens, "how": derived.explained, "version": ctx.release.tag,
            "scaling": scaling}


PARALLEL_SRC = "vllm/config/parallel.py ParallelConfig.__post_init__; vllm/v1/worker/gpu_worker.py Worker.init_device"

RULES: tuple[Rule, ...] = (
    Rule("tp-heads-indivisible", Severity.ERROR, TP,
         "tensor parallel size {tp} does not divide the model's {heads} attention heads",
         "set engine.tensorParallelSize to one of {ok}",
         "The attention heads divide by the TP size.",
         "vLLM exits: \"Total number of attention heads (N) must be divisible by tensor parallel size (TP)\".",
         "vllm/config/model.py ModelConfig.verify_with_parallel_config", _tp_heads),
    Rule("tp-kv-heads-indivisible", Severity.ERROR, TP,
         "tensor parallel size {tp} neither divides the model's {kv} KV heads nor is a multiple of them",
         "set engine.tensorParallelSize to one of {ok}",
         "KV heads split evenly over TP ranks, or are replicated a whole number of times.",
         "vLLM's QKVParallelLinear fails its divisibility assertion while building the model.",
         "vllm/model_executor/layers/linear.py QKVParallelLinear.__init__ (divide)", _tp_kv_heads),
    Rule("tp-linear-heads-indivisible", Severity.ERROR, TP,
         "tensor parallel size {tp} does not divide the linear-attention {heads} heads",
         "set engine.tensorParallelSize to one of {ok}",
         "Gated DeltaNet key and value heads divide by the TP size.",
         "vLLM fails an assertion while building the model (the heads are sharded with divide()).",
         "vllm/model_executor/layers/mamba/gdn_linear_attn.py GatedDeltaNetAttention.__init__ "
         "(divide(num_v_heads, tp_size), the conv1d ColumnParallelLinear); vllm/distributed/utils.py divide",
         _tp_linear_heads),
    Rule("parallel-exceeds-gpus", Severity.ERROR, TP,
         "{layout} needs {need} GPUs but the container gets {given}",
         "give the container {need} GPUs (hardware.deviceIds) or lower the TP/PP sizes",
         "Docker: TP x PP x DP GPUs are given to the container (device ids, else the host count).",
         "vLLM exits: \"World size (N) is larger than the number of available GPUs (M) in this node\".",
         PARALLEL_SRC, _exceeds_given),
    Rule("parallel-gpus-idle", Severity.WARNING, TP,
         "the container gets {given} GPUs but {layout} uses {need}; {idle} stay idle",
         "set hardware.deviceIds to {need} GPUs, or raise engine.tensorParallelSize",
         "Docker: TP x PP x DP equals the GPUs given (a Kubernetes pod requests exactly that).",
         "vLLM's workers take local ranks 0..TPxPP-1, the first visible GPUs; the rest are reserved for nothing.",
         "vllm/v1/worker/gpu_worker.py Worker.init_device (cuda:local_rank)", _idle),
    Rule("parallel-exceeds-host", Severity.ERROR, TP,
         "{layout} needs {need} GPUs but the host has {count}",
         "lower the TP/PP sizes (or dataParallelSize) to fit {count} GPUs, or span nodes "
         "(kubernetes.nodes, PP across nodes)",
         "TP x PP x DP does not exceed the host's GPUs (hardware.count); across nodes see multi-node-*.",
         "One server cannot use GPUs another host holds: vLLM exits as for too few visible GPUs.",
         PARALLEL_SRC, _exceeds_host),
    Rule("max-model-len-exceeds-model", Severity.ERROR, config_key("engine", "maxModelLen"),
         "maxModelLen {len} exceeds the {limit} tokens vLLM {version} derives for the model ({how})",
         "lower engine.maxModelLen to {limit} (or -1: vLLM fits it), or stretch the context with RoPE scaling in "
         "extraArgs: [--hf-overrides, '{scaling}'] (or the model's config.json rope_scaling)",
         "maxModelLen within the length the release derives: the config's length keys, times the RoPE "
         "factor of a scaling rope type (YaRN from original_max_position_embeddings; rope_theta alone stretches "
         "nothing), after --hf-overrides; -1 and VLLM_ALLOW_LONG_MAX_MODEL_LEN pass.",
         "vLLM exits: \"User-specified max_model_len (N) is greater than the derived max_model_len\".",
         "vllm/config/model.py _get_and_verify_max_len, ModelConfig._apply_dict_overrides; "
         "vllm/transformers_utils/config.py patch_rope_parameters; vllm/envs.py VLLM_ALLOW_LONG_MAX_MODEL_LEN",
         _max_len),
)
