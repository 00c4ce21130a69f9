"""A Hugging Face `config.json`, as published, -> the `ModelArchitecture` the planner needs.

Handles multimodal checkpoints whose language model sits under `text_config` (Qwen3.5, Gemma 3,
Mistral Small 3.x), keys a config class fills in when the file omits them (Gemma 3), hybrid
models that list `layer_types` ("full_attention" / "linear_attention" / "sliding_attention") or
give `full_attention_interval`, the Gated DeltaNet sizes (`linear_*`), multi-head latent
attention (`kv_lora_rank`, DeepSeek-V3) and mixtures of experts under their several names.
config.json carries no parameter count, so it is estimated from the layer shapes (layer_shapes.py).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from vllm_serving.bounded_read import FileRefused, read_regular_file
from vllm_serving.catalog.checkpoint_headers import HeaderError, header_weights
from vllm_serving.catalog.config_json_errors import excerpt, refused_value
from vllm_serving.catalog.hf_config_fields import (
    checkpoint_quantization,
    mrope,
    rope_scalings,
    rotary_factor,
    vision_params,
)
from vllm_serving.catalog.layer_shapes import estimate_params, experts, latent_attention
from vllm_serving.catalog.models import LinearAttention, ModelArchitecture, WeightDtype
from vllm_serving.catalog.vision_config import processor_configs, vision_encoder
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
    # vLLM gates Qwen3-Next's attention output unless the config says otherwise
    # (model_executor/models/qwen3_next.py: getattr(config, "attn_output_gate", True))
    "qwen3_next": {"attn_output_gate": True},
}
_FIX = "pass the model's own config.json as published on Hugging Face"
# model_type and quant_method as transformers registers them (qwen3_5, gemma3_text, xlm-roberta,
# compressed-tensors); architectures are Python class names (Qwen3_5ForConditionalGeneration).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
CLASS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
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


def _name(value: object, field: str, source: str) -> str:
    """A name config.json gives (model_type, quant_method): these reach messages and the stack file
    init writes, so anything but a plain name is refused rather than carried along."""
    if isinstance(value, str) and NAME.fullmatch(value):
        return value
    raise _fail(source, f"{field} is {excerpt(value)}, not a name of letters, digits, '_', '.' and '-'", _FIX)


def _names(value: object, source: str) -> list[str]:
    """`architectures`: class names, as transformers and vLLM's registry spell them."""
    if isinstance(value, list) and all(isinstance(v, str) and CLASS_NAME.fullmatch(v) for v in value):
        return value
    raise _fail(source, f"architectures is {excerpt(value)}, not a list of class names such as "
                        "Qwen3ForCausalLM", _FIX)


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


def parse_hf_config(config: Mapping[str, Any], source: str) -> ModelArchitecture:
    """The planner's facts from a parsed config.json; ConfigError naming the missing key, its
    finding keyed by `source` (the stack key or the path every caller has at hand)."""
    top = config
    try:
        text = _text_config(top)
        architectures = _names(top.get("architectures") or text.get("architectures") or [], source)
        model_type = _name(top.get("model_type") or text["model_type"], "model_type", source)
        layers = int(text["num_hidden_layers"])
        full, linear = _layer_counts(text, layers)
        window, sliding = _sliding(text, full)
        heads = int(text["num_attention_heads"])
        hidden = int(text["hidden_size"])
        mla = latent_attention(text)
        raw_dtype = str(text.get("dtype") or text.get("torch_dtype") or top.get("dtype")
                        or top.get("torch_dtype") or "bfloat16")
        quant_config = top.get("quantization_config") or text.get("quantization_config") or {}
        quant = quant_config.get("quant_method")
        quant = _name(quant, "quant_method", source) if quant else None
        tied = bool(top.get("tie_word_embeddings", text.get("tie_word_embeddings", False)))
        mtp = int(text.get("mtp_num_hidden_layers") or text.get("num_nextn_predict_layers") or 0)
        return ModelArchitecture(
            architecture=architectures[0] if architectures else model_type,
            model_type=model_type,
            family=_family(model_type),
            params_billion=round(estimate_params(text, full, linear, tied), 2),
            weights_dtype=_DTYPES.get(raw_dtype, "bfloat16"),
            quantization=quant,
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
            experts=experts(text),
            mtp_layers=mtp,
            refuses_float16=model_type in _REFUSE_FP16,
            tie_word_embeddings=tied,
            attention_output_gate=bool(text.get("attn_output_gate")),
            partial_rotary_factor=rotary_factor(text),
            multimodal_rope=mrope(text),
            vision_params_billion=round(vision_params(top, hidden), 3),
            rope_scaling=rope_scalings(text),
            quantization_config=checkpoint_quantization(quant_config) if quant else None,
            text_model_type=str(text["model_type"]) if text.get("model_type") not in (None, model_type) else None,
        )
    except KeyError as exc:
        raise _fail(source, f"has no '{exc.args[0]}' (looked in text_config, then the top level)", _FIX) from None
    except ValidationError as exc:  # a ValueError too: said in the file's keys, not pydantic's
        raise _fail(source, *refused_value(exc)) from None
    except (TypeError, ValueError, AttributeError, OverflowError, ZeroDivisionError) as exc:
        first = str(exc).splitlines()[0]
        raise _fail(source, f"holds a value the planner cannot use ({first})", _FIX) from None


def load_hf_config(path: Path, key: str | None = None) -> ModelArchitecture:
    """Read and parse a config.json file; findings name `key` (and the path) when given."""
    where = key or str(path)
    shown = f"{path}: " if key else ""
    fix = f"give the path of the model's config.json{' (relative to the project directory)' if key else ''}"
    try:
        data = json.loads(read_regular_file(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except FileRefused as exc:  # a FIFO or /dev/stdin would hang every verb; a huge file, fill memory
        larger = " than any config.json" if exc.too_large else ""
        raise _fail(where, f"{shown}{exc.reason}{larger}", fix) from None
    except FileNotFoundError:
        raise _fail(where, f"{shown}no such file", fix) from None
    except (OSError, ValueError, RecursionError) as exc:  # unreadable, not UTF-8, not JSON, nested past the stack
        raise _fail(where, f"{shown}is not a readable JSON file ({exc.__class__.__name__})", fix) from None
    if not isinstance(data, dict):
        raise _fail(where, f"{shown}is not a JSON object", fix)
    try:
        model = parse_hf_config(data, where)
    except ConfigError as exc:
        raise ConfigError([_prefixed(f, shown) for f in exc.findings]) from None
    # the encoder vLLM profiles, sized by the processor configs beside the config.json
    vision = vision_encoder(data, processor_configs(path.parent), str(path)) if model.vision_params_billion else None
    return _with_checkpoint(model.model_copy(update={"vision": vision}), path, where, shown)


def _with_checkpoint(model: ModelArchitecture, path: Path, where: str, shown: str) -> ModelArchitecture:
    """The weights from the safetensors headers beside the config.json, where the checkpoint
    is there (`checkpoint_headers.py`); else the model as parsed (sized per tensor from shapes)."""
    try:
        found = header_weights(path.parent, model.num_hidden_layers)
    except HeaderError as exc:
        raise _fail(where, f"{shown}the checkpoint beside it is unreadable: {exc}",
                    "check the safetensors files next to the config.json, or copy the config.json alone") from None
    if found is None:
        return model
    return model.model_copy(update={"weights_gib": found.loaded_bytes / 2**30, "weights_source": found.source})


def _prefixed(finding: Finding, shown: str) -> Finding:
    return Finding(finding.code, finding.severity, finding.key, shown + finding.message, finding.fix)
