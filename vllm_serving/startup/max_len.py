"""The longest context vLLM derives for a model, as the image's release derives it.

`config/model.py` `_get_and_verify_max_len` (v0.19.1): start from the smallest length key of
the (text) config (`max_position_embeddings` ...); unless the model type is one whose length is
already scaled (gemma3), multiply by the RoPE `factor` of every rope type that scales it, and for
YaRN start from `original_max_position_embeddings` instead. Which types scale, and how, is read
from the release (`release_facts.models(...).max_len`: v0.34 no longer scales YaRN). `--hf-overrides`
is applied first, as `ModelConfig.__post_init__` applies it: flat values to the top-level config
(for a multimodal model that is not its text config), nested ones merged into the sub-config they name.
A RoPE entry given as `rope_scaling` or `rope_parameters` is read the same way (`type` as `rope_type`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from vllm_serving.catalog.hf_config_fields import rope_scalings
from vllm_serving.catalog.models import ModelArchitecture, RopeScaling
from vllm_serving.engine import release_facts
from vllm_serving.engine.release_registry import VllmRelease

TEXT_CONFIG = "text_config"
LENGTH_KEY = "max_position_embeddings"


class DerivedLength(msgspec.Struct, frozen=True):
    tokens: int
    """What vLLM derives (and what maxModelLen may not exceed)."""
    explained: str
    """How, for messages: `max_position_embeddings 40960`, `original 32768 x YaRN 4.0` ..."""


def hf_overrides(values: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The dict vLLM's `--hf-overrides` ends as, from (option, value) pairs, as its parser builds it
    (utils/argparse_utils.py `FlexibleArgumentParser.parse_args`): the `--hf-overrides.a.b VALUE`
    items merge into one dict (each value JSON, else a string) passed last, and argparse keeps the
    last value given - so the dotted keys, when there are any, replace a `--hf-overrides JSON`, and
    of several JSON values the last counts. A value that is not a JSON object is left out: vLLM
    refuses it while parsing (extra-arg-value's finding)."""
    dotted: dict[str, Any] = {}
    last: dict[str, Any] = {}
    for option, value in values:
        _, _, path = option.partition(".")
        if path:
            try:
                nested: Any = json.loads(value)
            except ValueError:
                nested = value
            for key in reversed(path.split(".")):
                nested = {key: nested}
            _merge(dotted, nested)
            continue
        try:
            loaded = json.loads(value)
        except ValueError:
            continue
        if isinstance(loaded, dict):
            last = loaded
    return dotted or last


def _merge(into: dict[str, Any], update: Mapping[str, Any]) -> None:
    """vLLM's `recursive_dict_update`: nested dicts merge, lists extend, anything else replaces."""
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        elif isinstance(value, list) and isinstance(into.get(key), list):
            into[key] += value
        else:
            into[key] = value


def _applied(model: ModelArchitecture, overrides: Mapping[str, Any],
             multimodal: bool) -> tuple[int, tuple[RopeScaling, ...]]:
    """max_position_embeddings and RoPE after the overrides reach the text config."""
    text = overrides.get(TEXT_CONFIG) if multimodal else overrides
    text = text if isinstance(text, Mapping) else {}
    length = text.get(LENGTH_KEY, model.max_position_embeddings)
    rope = model.rope_scaling
    given = {k: text[k] for k in ("rope_scaling", "rope_parameters") if k in text}
    if given:
        rope = rope_scalings(given)
    return int(length), rope


def derived_max_model_len(model: ModelArchitecture, release: VllmRelease,
                          overrides: Mapping[str, Any] | None = None) -> DerivedLength | None:
    """The release's derived max_model_len for the model; None where the release's registry
    does not say how it derives it (then nothing is decided from it)."""
    facts = release_facts.models(release)
    derivation = facts.max_len
    if derivation is None:
        return None
    multimodal = model.architecture in (facts.multimodal_architectures or ())
    length, ropes = _applied(model, overrides or {}, multimodal)
    explained = f"{LENGTH_KEY} {length}"
    if not ropes or any(p in model.model_type for p in derivation.prescaled_model_types):
        return DerivedLength(length, explained)
    factor = 1.0
    for rope in ropes:
        if rope.rope_type in derivation.rope_types_not_scaling:
            continue
        factor = rope.factor if rope.factor is not None else factor
        if rope.rope_type in derivation.rope_from_original and rope.original_max_position_embeddings:
            length = rope.original_max_position_embeddings
            explained = f"original_max_position_embeddings {length}"
    if factor != 1.0:
        explained += f" x RoPE factor {factor:g}"
    return DerivedLength(int(length * factor), explained)
