"""A Hugging Face `config.json`, as published, -> the `ModelArchitecture` the planner needs.

Handles multimodal checkpoints whose language model sits under `text_config` (Qwen3.5, Gemma 3,
Mistral Small 3.x), keys a config class fills in when the file omits them (Gemma 3), hybrid
models that list `layer_types` ("full_attention" / "linear_attention" / "sliding_attention") or
give `full_attention_interval`, the Gated DeltaNet sizes (`linear_*`), multi-head latent
attention (`kv_lora_rank`, DeepSeek-V3) and mixtures of experts under their several names.
config.json carries no parameter count, so it is estimated from the layer shapes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vllm_serving.catalog.models import (
    CheckpointQuantization,
    LinearAttention,
    MixtureOfExperts,
    ModelArchitecture,
    MultiLatentAttention,
    RopeScaling,
    WeightDtype,
)
from vllm_serving.findings import ConfigError, Finding, Severity

# model_type prefix -> parser family (the reasoning/tool-call parsers that fit it).
_FAMILIES = (
    ("qwen3", "qwen3"), ("qwen2", "qwen2"), ("llama", "llama"), ("mistral", "mistral"),
    ("gemma", "gemma"), ("deepseek", "deepseek"), ("glm", "glm"), ("kimi", "kimi"),
)
# model_types vLLM refuses to run in float16, matched exactly as vLLM does
# (vllm/config/model.py _FLOAT16_NOT_SUPPORTED_MODELS, v0.19.1): glm4_moe or gemma3n are not refused.
_REFUSE_FP16 = frozenset({"gemma2", "gemma3", "gemma3_text", "glm4", "plamo2"})
_DTYPES: dict[str, WeightDtype] = {
    "bfloat16": "bfloat16", "float16": "float16", "half": "float16",
    "float32": "float32", "float": "float32",
}
_STATE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}

# What a config class sets when config.json leaves a key out (transformers writes only the keys
# that differ from the class defaults): Gemma3TextConfig.__init__ in
# transformers/models/gemma3/configuration_gemma3.py; MistralConfig's untied embeddings.
_GEMMA3_TEXT = {
    "vocab_size": 262_208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131_072,
    "tie_word_embeddings": True, "sliding_window": 4096, "sliding_window_pattern": 6,
}
_CLASS_DEFAULTS: dict[str, Mapping[str, Any]] = {
    "gemma3": _GEMMA3_TEXT, "gemma3_text": _GEMMA3_TEXT, "mistral": {"tie_word_embeddings": False},
}
_FIX = "pass the model's own config.json as published on Hugging Face"
# Published config.json files are kilobytes (Qwen3.5's, with its layer list, is 4 KiB).
MAX_CONFIG_BYTES = 4 * 2**20


def _fail(source: str, message: str, fix: str) -> ConfigError:
    return ConfigError([Finding("model-config-invalid", Severity.ERROR, source, message, fix)])


def _text_config(top: Mapping[str, Any]) -> dict[str, Any]:
    """The language model's keys over the defaults of its config class."""
    text: Mapping[str, Any] = top.get("text_config") or top
    defaults = _CLASS_DEFAULTS.get(str(text.get("model_type")), _CLASS_DEFAULTS.get(str(top.get("model_type")), {}))
    return {**defaults, **text}


def _layer_counts(text: Mapping[str, Any], layers: int) -> tuple[int, int]:
    """(attention layers, linear-attention layers)."""
    types = text.get("layer_types")
    if isinstance(types, list) and types:
        linear = sum(1 for t in types if t == "linear_attention")
        return len(types) - linear, linear  # sliding/other attention keeps per-token KV too
    interval = text.get("full_attention_interval")
    if isinstance(interval, int) and interval > 0 and "linear_num_value_heads" in text:
        full = layers // interval
        return full, layers - full
    return layers, 0


def _sliding(text: Mapping[str, Any], attention_layers: int) -> tuple[int | None, int]:
    """(window, layers limited to it): from `layer_types`, Gemma's every-Nth-layer-is-global
    `sliding_window_pattern`, or a window on every layer unless `use_sliding_window` is false."""
    window = text.get("sliding_window")
    if not window:
        return None, 0
    types = text.get("layer_types")
    if isinstance(types, list) and types:
        count = sum(1 for t in types if t == "sliding_attention")
    elif isinstance(pattern := text.get("sliding_window_pattern"), int) and pattern > 0:
        count = attention_layers - attention_layers // pattern
    else:
        count = attention_layers if text.get("use_sliding_window", True) else 0
    return (int(window), count) if count else (None, 0)


def _mla(text: Mapping[str, Any]) -> MultiLatentAttention | None:
    if "kv_lora_rank" not in text:
        return None
    return MultiLatentAttention(
        kv_lora_rank=int(text["kv_lora_rank"]), qk_rope_head_dim=int(text["qk_rope_head_dim"]),
        qk_nope_head_dim=int(text["qk_nope_head_dim"]), v_head_dim=int(text["v_head_dim"]),
        q_lora_rank=int(text["q_lora_rank"]) if text.get("q_lora_rank") else None)


def _experts(text: Mapping[str, Any]) -> MixtureOfExperts | None:
    count = text.get("num_experts") or text.get("n_routed_experts") or text.get("num_local_experts")
    if not count:
        return None
    shared = int(text.get("n_shared_experts") or (1 if text.get("shared_expert_intermediate_size") else 0))
    per_token = text.get("num_experts_per_tok") or text["experts_per_token"]
    # the width vLLM builds each expert with: FusedMoE(intermediate_size=config.moe_intermediate_size)
    # in qwen3_moe.py and deepseek_v2.py, config.intermediate_size in gpt_oss.py and mixtral.py (v0.19.1)
    width = text.get("moe_intermediate_size") or text.get("intermediate_size")
    return MixtureOfExperts(num_experts=int(count), experts_per_token=int(per_token), shared_experts=shared,
                            intermediate_size=int(width) if width else None)


def _attention_params(text: Mapping[str, Any], head_dim: int, mla: MultiLatentAttention | None) -> int:
    """One attention layer's projections (x2 on q when the output is gated; MLA's low-rank ones)."""
    hidden, heads = int(text["hidden_size"]), int(text["num_attention_heads"])
    if mla is not None:
        qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        q = hidden * mla.q_lora_rank + mla.q_lora_rank * heads * qk if mla.q_lora_rank else hidden * heads * qk
        kv = hidden * mla.cache_dim + mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
        return q + kv + heads * mla.v_head_dim * hidden
    kv_heads = int(text.get("num_key_value_heads") or heads)
    q_out = heads * head_dim * (2 if text.get("attn_output_gate") else 1)
    return hidden * q_out + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden


def _mlp_params(text: Mapping[str, Any], layers: int) -> int:
    """All layers' MLPs: dense, or routed experts (+ shared expert, router) after any dense layers."""
    hidden = int(text["hidden_size"])
    experts = _experts(text)
    if experts is None:
        return layers * 3 * hidden * int(text["intermediate_size"])
    width = experts.intermediate_size
    if width is None:
        raise KeyError("moe_intermediate_size")
    shared = int(text.get("shared_expert_intermediate_size") or 0) or experts.shared_experts * width
    dense = int(text.get("first_k_dense_replace") or 0) + len(text.get("mlp_only_layers") or [])
    moe = experts.num_experts * 3 * hidden * width + 3 * hidden * shared + hidden * experts.num_experts
    return (layers - dense) * moe + dense * 3 * hidden * int(text.get("intermediate_size") or 0)


def estimate_params(text: Mapping[str, Any], full: int, linear: int, tied: bool) -> float:
    """Parameters (billions) from the shapes: embeddings (+ untied head), attention, Gated
    DeltaNet projections, dense or MoE MLPs. Norms, biases and vision towers are left out."""
    hidden, vocab = int(text["hidden_size"]), int(text["vocab_size"])
    heads = int(text["num_attention_heads"])
    mla = _mla(text)
    head_dim = int(text.get("head_dim") or hidden // heads)
    total = vocab * hidden * (1 if tied else 2) + full * _attention_params(text, head_dim, mla)
    if linear:
        kh, vh = int(text["linear_num_key_heads"]), int(text["linear_num_value_heads"])
        kd, vd = int(text["linear_key_head_dim"]), int(text["linear_value_head_dim"])
        conv_dim = 2 * kh * kd + vh * vd
        gdn = hidden * (conv_dim + vh * vd + 2 * vh) + vh * vd * hidden
        gdn += conv_dim * int(text.get("linear_conv_kernel_dim") or 4)
        total += linear * gdn
    return (total + _mlp_params(text, full + linear)) / 1e9


def rope_scalings(text: Mapping[str, Any]) -> tuple[RopeScaling, ...]:
    """The RoPE entries that can stretch the context: `rope_scaling` (or `rope_parameters`,
    possibly one per layer type) with a factor or an original length, read as vLLM's
    `patch_rope_parameters_dict` reads them (`type` -> `rope_type`, `su` -> `longrope`)."""
    raw = text.get("rope_scaling") or text.get("rope_parameters")
    if not isinstance(raw, Mapping):
        return ()
    entries = [v for v in raw.values() if isinstance(v, Mapping)] or [raw]
    found = []
    for entry in entries:
        kind = str(entry.get("rope_type") or entry.get("type") or "default")
        factor, original = entry.get("factor"), entry.get("original_max_position_embeddings")
        if factor is None and original is None:
            continue
        found.append(RopeScaling(rope_type={"su": "longrope", "mrope": "default"}.get(kind, kind),
                                 factor=float(factor) if factor is not None else None,
                                 original_max_position_embeddings=int(original) if original is not None else None))
    return tuple(found)


def _checkpoint_quantization(config: Mapping[str, Any]) -> CheckpointQuantization | None:
    """bits, group size, zero points, symmetry, activation order and FP8 blocks, under the keys
    vLLM's configs read them (`AWQConfig.from_config`: w_bit/bits, q_group_size/group_size;
    `GPTQMarlinConfig`: sym, desc_act; `Fp8Config`: weight_block_size)."""
    if not isinstance(config, Mapping):
        return None
    bits = config.get("bits", config.get("w_bit"))
    group = config.get("group_size", config.get("q_group_size"))
    block = config.get("weight_block_size")
    facts = CheckpointQuantization(
        bits=int(bits) if isinstance(bits, int) else None, group_size=int(group) if isinstance(group, int) else None,
        zero_point=bool(config["zero_point"]) if isinstance(config.get("zero_point"), bool) else None,
        symmetric=bool(config["sym"]) if isinstance(config.get("sym"), bool) else None,
        desc_act=bool(config["desc_act"]) if isinstance(config.get("desc_act"), bool) else None,
        weight_block_size=(int(block[0]), int(block[1])) if isinstance(block, list) and len(block) == 2 else None)
    return facts if facts != CheckpointQuantization() else None


def _family(model_type: str) -> str:
    return next((fam for prefix, fam in _FAMILIES if model_type.startswith(prefix)), model_type)


def _linear(text: Mapping[str, Any], linear: int) -> LinearAttention | None:
    if not linear:
        return None
    return LinearAttention(
        num_layers=linear,
        num_key_heads=int(text["linear_num_key_heads"]),
        num_value_heads=int(text["linear_num_value_heads"]),
        key_head_dim=int(text["linear_key_head_dim"]),
        value_head_dim=int(text["linear_value_head_dim"]),
        conv_kernel=int(text.get("linear_conv_kernel_dim") or 4),
        # vLLM takes the state dtype from config.json only where present (Qwen3.5/3.6), else the
        # compute dtype (vllm/model_executor/models/config.py, v0.19.1)
        state_dtype_bytes=_STATE_BYTES.get(str(text["mamba_ssm_dtype"]), 4) if "mamba_ssm_dtype" in text else None,
    )


def parse_hf_config(config: Mapping[str, Any], source: str = "config.json") -> ModelArchitecture:
    """The planner's facts from a parsed config.json; ConfigError naming the missing key."""
    top = config
    try:
        text = _text_config(top)
        architectures = top.get("architectures") or text.get("architectures") or []
        model_type = str(top.get("model_type") or text["model_type"])
        layers = int(text["num_hidden_layers"])
        full, linear = _layer_counts(text, layers)
        window, sliding = _sliding(text, full)
        heads = int(text["num_attention_heads"])
        hidden = int(text["hidden_size"])
        mla = _mla(text)
        raw_dtype = str(text.get("dtype") or text.get("torch_dtype") or top.get("dtype")
                        or top.get("torch_dtype") or "bfloat16")
        quant_config = top.get("quantization_config") or text.get("quantization_config") or {}
        quant = quant_config.get("quant_method")
        tied = bool(top.get("tie_word_embeddings", text.get("tie_word_embeddings", False)))
        mtp = int(text.get("mtp_num_hidden_layers") or text.get("num_nextn_predict_layers") or 0)
        return ModelArchitecture(
            architecture=str(architectures[0]) if architectures else model_type,
            model_type=model_type,
            family=_family(model_type),
            params_billion=round(estimate_params(text, full, linear, tied), 2),
            weights_dtype=_DTYPES.get(raw_dtype, "bfloat16"),
            quantization=str(quant) if quant else None,
            num_hidden_layers=layers,
            hidden_size=hidden,
            intermediate_size=int(text["intermediate_size"]) if text.get("intermediate_size") else None,
            vocab_size=int(text["vocab_size"]),
            max_position_embeddings=int(text["max_position_embeddings"]),
            num_attention_heads=heads,
            num_key_value_heads=int(text.get("num_key_value_heads") or heads),
            # MLA: the query/key head (nope + rope parts); what is cached is mla.cache_dim
            head_dim=(mla.qk_nope_head_dim + mla.qk_rope_head_dim if mla else
                      int(text.get("head_dim") or math.ceil(hidden / heads))),
            full_attention_layers=full,
            linear_attention=_linear(text, linear),
            mla=mla,
            sliding_window=window,
            sliding_window_layers=sliding,
            experts=_experts(text),
            mtp_layers=mtp,
            refuses_float16=model_type in _REFUSE_FP16,
            rope_scaling=rope_scalings(text),
            quantization_config=_checkpoint_quantization(quant_config) if quant else None,
        )
    except KeyError as exc:
        raise _fail(source, f"has no '{exc.args[0]}' (looked in text_config, then the top level)", _FIX) from None
    except (TypeError, ValueError, ValidationError, ZeroDivisionError) as exc:
        first = str(exc).splitlines()[0]
        raise _fail(source, f"holds a value the planner cannot use ({first})", _FIX) from None


def load_hf_config(path: Path, key: str | None = None) -> ModelArchitecture:
    """Read and parse a config.json file; findings name `key` (and the path) when given."""
    where = key or str(path)
    shown = f"{path}: " if key else ""
    fix = f"give the path of the model's config.json{' (relative to the project directory)' if key else ''}"
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise _fail(where, f"{shown}is larger than any config.json ({MAX_CONFIG_BYTES // 2**20} MiB)", fix)
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise _fail(where, f"{shown}no such file", fix) from None
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, not JSON (all ValueErrors)
        raise _fail(where, f"{shown}is not a readable JSON file ({exc.__class__.__name__})", fix) from None
    if not isinstance(data, dict):
        raise _fail(where, f"{shown}is not a JSON object", fix)
    try:
        return parse_hf_config(data, where)
    except ConfigError as exc:
        raise ConfigError([_prefixed(f, shown) for f in exc.findings]) from None


def _prefixed(finding: Finding, shown: str) -> Finding:
    return Finding(finding.code, finding.severity, finding.key, shown + finding.message, finding.fix)
