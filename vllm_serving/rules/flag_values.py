"""engine.extraArgs values: each against its flag's choices and type, and all of them (with the
typed keys) against the release's feature gates.

argparse refuses a value outside `choices` or one its `type` cannot convert ("invalid choice",
"invalid int value") before vLLM runs. The feature gates are the release's own refusals of flag
combinations before the model loads (`EngineArgs._check_feature_supported`'s NotImplementedError
for concurrent partial prefill in v0.19.1, the config classes' ValueErrors), read from the
registry (`tools/vllm_release/gates.py`) and evaluated on the stack's arguments: the typed keys'
flags and extraArgs, with each flag's static default where the stack leaves it unset. A gate is
only reported when an extraArgs item sets one of its flags (the typed keys have rules of their own).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from weakref import WeakKeyDictionary

import msgspec

from vllm_serving.command.vllm_argv import render_flags
from vllm_serving.engine import release_facts
from vllm_serving.engine.expressions import MissingInput, Unsupported, evaluate
from vllm_serving.engine.flags import FLAGS
from vllm_serving.engine.release_records import ServeFlag
from vllm_serving.findings import Severity
from vllm_serving.rules.base import Context, Facts, Rule
from vllm_serving.rules.extra_args import EXTRA_ARGS, ItemRule

_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_SCALE = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
RESOLVED_BEFORE_CONFIG = frozenset({"max_num_batched_tokens", "max_num_seqs", "enable_chunked_prefill",
                                    "enable_prefix_caching"})
"""EngineArgs fields whose None default `create_engine_config` fills in before a config's validators
run (v0.19.1 engine/arg_utils.py `_set_default_max_num_seqs_and_batched_tokens_args`,
`_set_default_chunked_prefill_and_prefix_caching_args`): a gate that reads one is not judged on
None. Every other None reaches the config as None (`--collect-detailed-traces` without
`--otlp-traces-endpoint`: ObservabilityConfig raises)."""


class _NotConverted(ValueError):
    pass


# The value types `_convert` can fail on, as a finding names them: no other type raises _NotConverted.
_TYPE_WORDS = {"int": "a whole number", "float": "a number", "json": "JSON"}


class Given(msgspec.Struct, frozen=True):
    """One flag the argv sets: its value as argparse converts it, and the extraArgs item (None
    for a typed key)."""

    flag: ServeFlag
    value: object
    index: int | None
    text: str | None  # the value as written; None for a switch


def _convert(flag: ServeFlag, text: str) -> object:
    """argparse's `type=` for the flag (vLLM's human-readable ints too); _NotConverted if it fails."""
    try:
        if flag.value_type == "int":
            if flag.human_readable and (text.strip() == "-1" or text.strip().lower() == "auto"):
                return -1
            found = _HUMAN.fullmatch(text.strip()) if flag.human_readable else None
            if found and found[2].isupper():  # binary suffixes take whole numbers only
                return int(found[1]) * _SCALE[found[2]]
            return int(float(found[1]) * _SCALE[found[2]]) if found else int(text)
        if flag.value_type == "float":
            return float(text)
        if flag.value_type == "json":
            return json.loads(text)
    except ValueError as exc:
        raise _NotConverted(str(exc)) from None
    return text


def _walk(ctx: Context) -> list[Given]:
    """The flags the container's argv sets: typed keys first, then extraArgs (argparse keeps the last)."""
    typed = render_flags(ctx.settings, FLAGS)
    items: list[tuple[str, int | None]] = [(t, None) for t in typed]
    items += [(t, i) for i, t in enumerate(ctx.engine.extra_args)]
    found: list[Given] = []
    position = 0
    while position < len(items):
        text, index = items[position]
        match = ctx.release.match(text) if text.startswith("-") else None
        position += 1
        if match is None or "." in text.split("=", 1)[0]:  # dotted JSON keys: merged, not one value
            continue
        flag = match.flag
        if not flag.takes_value:
            found.append(Given(flag, not match.negated and flag.action != "store_false", index, None))
            continue
        _, eq, inline = text.partition("=")
        if eq:
            value_text = inline
        elif position < len(items) and flag.nargs in (None, "?") and not items[position][0].startswith("--"):
            value_text = items[position][0]
            position += 1
        else:
            continue  # no value, or several (nargs): extra-arg-value's and argparse's business
        try:
            found.append(Given(flag, _convert(flag, value_text), index, value_text))
        except _NotConverted:
            found.append(Given(flag, _NotConverted(value_text), index, value_text))
    return found


_GIVEN: WeakKeyDictionary[Context, list[Given]] = WeakKeyDictionary()


def given(ctx: Context) -> list[Given]:
    found = _GIVEN.get(ctx)
    if found is None:
        found = _walk(ctx) if ctx.engine.extra_args else []
        _GIVEN[ctx] = found
    return found


def _choices(ctx: Context) -> list[Facts] | None:
    hits: list[Facts] = []
    for item in given(ctx):
        if item.index is None or item.text is None:
            continue
        flag = item.flag
        if isinstance(item.value, _NotConverted):
            kind = _TYPE_WORDS[flag.value_type]
            hits.append({"index": item.index, "flag": flag.name, "detail": f"takes {kind}, which this value is not",
                         "version": ctx.release.tag})
        elif flag.choices is not None and item.value not in flag.choices:
            shown = ", ".join(str(c) for c in flag.choices)
            hits.append({"index": item.index, "flag": flag.name, "detail": f"takes one of {shown}",
                         "version": ctx.release.tag})
    return hits or None


def _gates(ctx: Context) -> list[Facts] | None:
    items = given(ctx)
    if not items:
        return None
    # by the flag's name: a gate of a config class names the field (`backend`), the flag's dest differs
    # (`mamba_backend`); the registry ties each of the gate's names to its flag
    values = {i.flag.name: i.value for i in items if not isinstance(i.value, _NotConverted)}
    from_extra = {i.flag.name: i.index for i in items if i.index is not None}
    hits: list[Facts] = []
    for gate in release_facts.gates(ctx.release):
        set_here = [name for name, flag in gate.flags.items() if flag in from_extra]
        if not set_here:
            continue
        engine_args = "EngineArgs." in gate.source
        bound: dict[str, object] = {}
        for name, flag in gate.flags.items():
            if flag in values:
                bound[name] = values[flag]
            elif name in gate.defaults and (engine_args or gate.defaults[name] is not None
                                            or name not in RESOLVED_BEFORE_CONFIG):
                bound[name] = gate.defaults[name]
        try:
            tripped = len(bound) == len(gate.flags) and evaluate(gate.when, bound)
        except (MissingInput, Unsupported, TypeError):
            tripped = False
        if tripped:
            try:
                message = gate.message.format_map(defaultdict(str, {k: str(v) for k, v in bound.items()}))
            except (AttributeError, IndexError, KeyError, ValueError):
                message = gate.message
            flag = gate.flags[set_here[0]]
            hits.append({"index": from_extra[flag], "flag": flag, "exception": gate.exception,
                         "detail": message, "version": ctx.release.tag, "source": gate.source,
                         "flags": ", ".join(gate.flags.values())})
    return hits or None


LOAD_FORMAT = "--load-format"


def _load_format(ctx: Context) -> list[Facts] | None:
    """`--load-format` takes any string (a plugin may register a loader); `get_model_loader` refuses
    one the release has no loader for (`LoadConfig` lower-cases it first)."""
    known = release_facts.load_formats(ctx.release)
    if known is None:
        return None
    names, source = known
    hits: list[Facts] = [{"index": item.index, "flag": LOAD_FORMAT, "value": item.text, "version": ctx.release.tag,
                          "valid": ", ".join(sorted(names)), "source": source}
                         for item in given(ctx) if item.flag.name == LOAD_FORMAT and item.index is not None
                         and item.text is not None and item.text.lower() not in names]
    return hits or None


EXPERT_PARALLEL = "--enable-expert-parallel"


def _dense_expert_parallel(ctx: Context) -> list[Facts] | None:
    """`ModelConfig._verify_with_expert_parallelism`: expert parallelism needs experts."""
    if ctx.model.experts is not None:
        return None
    items = [i for i in given(ctx) if i.flag.name == EXPERT_PARALLEL and i.index is not None]
    if not items or items[-1].value is not True:
        return None
    return [{"index": items[-1].index, "flag": EXPERT_PARALLEL, "arch": ctx.model.architecture}]


SOURCE = "vllm/engine/arg_utils.py (the flags' choices and types, _compute_kwargs); argparse"

RULES: tuple[Rule, ...] = (
    ItemRule("extra-arg-choice", Severity.ERROR, EXTRA_ARGS,
             "{flag} {detail} (vLLM {version}): vLLM exits while parsing its arguments",
             "write a value the flag takes (vllm serve --help lists them), or remove the item",
             "An extraArgs value outside its flag's choices, or one the flag's type cannot read (a word for a "
             "number, a --hf-overrides value that is not JSON).",
             "argparse exits: \"argument ...: invalid choice\" / \"invalid int value\".", SOURCE, _choices),
    ItemRule("extra-arg-feature-gate", Severity.ERROR, EXTRA_ARGS,
             "vLLM {version} refuses {flags} as set here ({exception}): {detail}",
             "change or remove {flag} in engine.extraArgs",
             "extraArgs combinations the release refuses before loading the model (its feature gates: "
             "NotImplementedError/ValueError on flags alone, e.g. --max-num-partial-prefills in v0.19.1).",
             "vLLM exits while building its config, before the model loads.",
             "vllm/engine/arg_utils.py EngineArgs._check_feature_supported; vllm/config/*.py __post_init__ and "
             "validators; vllm/entrypoints/openai/cli_args.py validate_parsed_serve_args (the gates' own sources "
             "are in the registry)", _gates),
    ItemRule("extra-arg-load-format-unknown", Severity.ERROR, EXTRA_ARGS,
             "vLLM {version} has no model loader for {flag} {value}",
             "use one of {valid}, or remove the item (auto); a loader a plugin registers needs a waiver",
             "--load-format names a loader the release has.",
             "The workers exit as they start loading: \"Load format `...` is not supported\".",
             "vllm/model_executor/model_loader/__init__.py get_model_loader (_LOAD_FORMAT_TO_MODEL_LOADER); "
             "vllm/config/load.py LoadConfig", _load_format),
    ItemRule("extra-arg-expert-parallel-dense", Severity.ERROR, EXTRA_ARGS,
             "{flag} asks expert parallelism of {arch}, which has no experts",
             "remove it: a dense model is split with engine.tensorParallelSize / pipelineParallelSize",
             "--enable-expert-parallel only for mixture-of-experts models.",
             "vLLM exits while building its config: \"Number of experts in the model must be greater than 0 when "
             "expert parallelism is enabled\".",
             "vllm/config/model.py ModelConfig._verify_with_expert_parallelism", _dense_expert_parallel),
)
