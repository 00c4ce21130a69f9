"""A config.json value the architecture facts refuse, said in the config.json's own words.

`hf_config.parse_hf_config` builds the facts (`ModelArchitecture` and its parts) from the file's
keys; when pydantic refuses one, its own message ("1 validation error for ModelArchitecture")
names neither the key nor the value. This names the key as the file spells it, the value as the
file gives it (quoted short: it may be huge or hostile), and what to change.
"""

from __future__ import annotations

import re
import reprlib

from pydantic import ValidationError

_QUOTE = reprlib.Repr()
_QUOTE.maxstring, _QUOTE.maxother, _QUOTE.maxlist, _QUOTE.maxdict, _QUOTE.maxlevel = 40, 40, 4, 4, 2

# (facts class, field) -> the config.json key it is read from, where the two names differ
# (hf_config.py, hf_config_fields.py); every other field is read from the key of its own name.
_CONFIG_KEYS: dict[tuple[str, str], str] = {
    ("ModelArchitecture", "architecture"): "architectures",
    ("ModelArchitecture", "params_billion"): "hidden_size, intermediate_size or vocab_size (the parameter count)",
    ("ModelArchitecture", "weights_dtype"): "torch_dtype",
    ("ModelArchitecture", "mtp_layers"): "mtp_num_hidden_layers",
    ("ModelArchitecture", "full_attention_layers"): "layer_types",
    ("ModelArchitecture", "sliding_window_layers"): "layer_types",
    ("LinearAttention", "num_layers"): "layer_types",
    ("LinearAttention", "num_key_heads"): "linear_num_key_heads",
    ("LinearAttention", "num_value_heads"): "linear_num_value_heads",
    ("LinearAttention", "key_head_dim"): "linear_key_head_dim",
    ("LinearAttention", "value_head_dim"): "linear_value_head_dim",
    ("LinearAttention", "conv_kernel"): "linear_conv_kernel_dim",
    ("MixtureOfExperts", "experts_per_token"): "num_experts_per_tok",
    ("MixtureOfExperts", "intermediate_size"): "moe_intermediate_size",
    ("MixtureOfExperts", "shared_experts"): "n_shared_experts",
}
_CAMEL = re.compile(r"(?<=[a-z])([A-Z])")
_SNAKE = re.compile(r"[a-z]+(?:_[a-z]+)+")
_FIX = "correct {keys} in the config.json to the model's published value (or copy its config.json again " \
       "from the model's Hugging Face repository)"


def excerpt(value: object) -> str:
    """A bad value from the file, quoted short: it may be huge or hostile."""
    return _QUOTE.repr(value)


def _config_key(model: str, field: str) -> str:
    return _CONFIG_KEYS.get((model, field), field)


def refused_value(exc: ValidationError) -> tuple[str, str]:
    """(message, fix) for the first value pydantic refused while the facts were built."""
    error = exc.errors(include_url=False)[0]
    reason = str(error["msg"]).removeprefix("Value error, ")
    if error["loc"]:
        key = _config_key(exc.title, str(error["loc"][0]))
        reason = reason[:1].lower() + reason[1:]
        return f"{key} is {excerpt(error['input'])}: {reason}", _FIX.format(keys=key)
    # a check across fields (heads a multiple of KV heads, ...): its message names the fields in
    # camelCase, as a stack's inline `model.architecture` spells them; here, the file's keys
    named = _CAMEL.sub(lambda m: "_" + m.group(1).lower(), reason)
    keys = sorted({_config_key(exc.title, w) for w in _SNAKE.findall(named)})
    return named, _FIX.format(keys=" and ".join(keys) or "the values")
