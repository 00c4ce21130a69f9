"""A Hugging Face `config.json`, as published, -> the `ModelArchitecture` the planner needs.

Handles multimodal checkpoints whose language model sits under `text_config` (Qwen3.5),
hybrid models that list `layer_types` ("full_attention" / "linear_attention") or give
`full_attention_interval`, and the Gated DeltaNet sizes (`linear_*`). config.json carries no
parameter count, so it is estimated from the layer shapes (embeddings, attention, MLP/MoE).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vllm_serving.catalog.models import LinearAttention, ModelArchitecture, WeightDtype
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


def _fail(source: str, message: str, fix: str) -> ConfigError:
    return ConfigError([Finding("model-config-invalid", Severity.ERROR, source, message, fix)])


def _layer_counts(text: Mapping[str, Any], layers: int) -> tuple[int, int]:
    """(full-attention layers, linear-attention layers)."""
    types = text.get("layer_types")
    if isinstance(types, list) and types:
        linear = sum(1 for t in types if t == "linear_attention")
        return len(types) - linear, linear  # sliding/other attention keeps per-token KV too
    interval = text.get("full_attention_interval")
    if isinstance(interval, int) and interval > 0 and "linear_num_value_heads" in text:
        full = layers // interval
        return full, layers - full
    return layers, 0


def estimate_params(text: Mapping[str, Any], full: int, linear: int, tied: bool) -> float:
    """Parameters (billions) from the shapes: embeddings (+ untied head), attention projections
    (x2 on q when the output is gated), Gated DeltaNet projections, dense or MoE MLPs."""
    hidden, vocab = int(text["hidden_size"]), int(text["vocab_size"])
    heads = int(text["num_attention_heads"])
    kv_heads = int(text.get("num_key_value_heads") or heads)
    head_dim = int(text.get("head_dim") or hidden // heads)
    q_out = heads * head_dim * (2 if text.get("attn_output_gate") else 1)
    attention = hidden * q_out + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden
    total = vocab * hidden * (1 if tied else 2) + full * attention
    if linear:
        kh, vh = int(text["linear_num_key_heads"]), int(text["linear_num_value_heads"])
        kd, vd = int(text["linear_key_head_dim"]), int(text["linear_value_head_dim"])
        conv_dim = 2 * kh * kd + vh * vd
        gdn = hidden * (conv_dim + vh * vd + 2 * vh) + vh * vd * hidden
        gdn += conv_dim * int(text.get("linear_conv_kernel_dim") or 4)
        total += linear * gdn
    experts = int(text.get("num_experts") or text.get("n_routed_experts") or 0)
    if experts:
        moe = experts * 3 * hidden * int(text["moe_intermediate_size"])
        moe += 3 * hidden * int(text.get("shared_expert_intermediate_size") or 0)
        total += (full + linear) * moe
    else:
        total += (full + linear) * 3 * hidden * int(text["intermediate_size"])
    return total / 1e9


def _family(model_type: str) -> str:
    return next((fam for prefix, fam in _FAMILIES if model_type.startswith(prefix)), model_type)


def parse_hf_config(config: Mapping[str, Any], source: str = "config.json") -> ModelArchitecture:
    """The planner's facts from a parsed config.json; ConfigError naming the missing key."""
    top = config
    text: Mapping[str, Any] = top.get("text_config") or top
    try:
        architectures = top.get("architectures") or text.get("architectures") or []
        model_type = str(top.get("model_type") or text["model_type"])
        layers = int(text["num_hidden_layers"])
        full, linear = _layer_counts(text, layers)
        heads = int(text["num_attention_heads"])
        hidden = int(text["hidden_size"])
        raw_dtype = str(text.get("dtype") or text.get("torch_dtype") or top.get("torch_dtype") or "bfloat16")
        quant = (top.get("quantization_config") or text.get("quantization_config") or {}).get("quant_method")
        tied = bool(top.get("tie_word_embeddings", text.get("tie_word_embeddings", False)))
        mtp = int(text.get("mtp_num_hidden_layers") or text.get("num_nextn_predict_layers") or 0)
        lin = None
        if linear:
            lin = LinearAttention(
                num_layers=linear,
                num_key_heads=int(text["linear_num_key_heads"]),
                num_value_heads=int(text["linear_num_value_heads"]),
                key_head_dim=int(text["linear_key_head_dim"]),
                value_head_dim=int(text["linear_value_head_dim"]),
                conv_kernel=int(text.get("linear_conv_kernel_dim") or 4),
                state_dtype_bytes=_STATE_BYTES.get(str(text.get("mamba_ssm_dtype", "float32")), 4),
            )
        return ModelArchitecture(
            architecture=str(architectures[0]) if architectures else model_type,
            model_type=model_type,
            family=_family(model_type),
            params_billion=round(estimate_params(text, full, linear, tied), 2),
            weights_dtype=_DTYPES.get(raw_dtype, "bfloat16"),
            quantization=str(quant) if quant else None,
            num_hidden_layers=layers,
            hidden_size=hidden,
            vocab_size=int(text["vocab_size"]),
            max_position_embeddings=int(text["max_position_embeddings"]),
            num_attention_heads=heads,
            num_key_value_heads=int(text.get("num_key_value_heads") or heads),
            head_dim=int(text.get("head_dim") or math.ceil(hidden / heads)),
            full_attention_layers=full,
            linear_attention=lin,
            mtp_layers=mtp,
            refuses_float16=model_type in _REFUSE_FP16,
        )
    except KeyError as exc:
        raise _fail(source, f"has no '{exc.args[0]}' (looked in text_config, then the top level)",
                    "pass the model's own config.json as published on Hugging Face") from None
    except (TypeError, ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise _fail(source, f"holds a value the planner cannot use ({first})",
                    "pass the model's own config.json as published on Hugging Face") from None


def load_hf_config(path: Path) -> ModelArchitecture:
    """Read and parse a config.json file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _fail(str(path), "no such file", "give the path of the model's config.json") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(str(path), f"is not a readable JSON file ({exc.__class__.__name__})",
                    "give the path of the model's config.json") from None
    if not isinstance(data, dict):
        raise _fail(str(path), "is not a JSON object", "give the path of the model's config.json")
    return parse_hf_config(data, str(path))
