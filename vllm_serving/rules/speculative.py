"""Speculative decoding: the method exists in the release, has its draft, and fits the model.

All of it is `SpeculativeConfig.__post_init__` in vllm/config/speculative.py: which methods
exist (`SpeculativeMethod`), which need a draft `model`, the per-model MTP names folded into
`mtp`, and the checks on num_speculative_tokens against the model's MTP layers (`n_predict`).
"""

from __future__ import annotations

from vllm_serving.engine.release_registry import SpeculativeMethod
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule

SPEC = config_key("engine", "speculativeConfig")
MTP = "mtp"
# More tokens than this per step rerun the same MTP layer ("Enabling num_speculative_tokens > 1
# will run multiple times of forward on same MTP layer, which may result in lower acceptance rate").
MTP_TOKENS_WITHOUT_REUSE = 1
SRC = "vllm/config/speculative.py SpeculativeConfig.__post_init__"


def _method(ctx: Context) -> SpeculativeMethod | None:
    """The release's entry for the stack's method; None without one (or an unknown name)."""
    spec = ctx.engine.speculative_config
    return None if spec is None else ctx.release.speculative_methods.get(spec.method)


def _resolved(ctx: Context) -> str | None:
    """The method vLLM runs: deprecated spellings resolve to what they alias."""
    method = _method(ctx)
    return None if method is None else method.alias_of or method.name


def _valid(ctx: Context) -> str:
    return ", ".join(sorted(m.name for m in ctx.release.speculative_methods.values() if m.alias_of is None))


def _unknown(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    if spec is not None and _method(ctx) is None:
        return {"method": spec.method, "version": ctx.release.tag, "valid": _valid(ctx)}
    return None


def _draft_missing(ctx: Context) -> Facts | None:
    method = _method(ctx)
    spec = ctx.engine.speculative_config
    if method is not None and spec is not None and method.needs_draft_model and spec.model is None:
        return {"method": method.name}
    return None


def _mtp_without_layers(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    if spec is not None and _resolved(ctx) == MTP and ctx.model.mtp_layers == 0:
        return {"method": spec.method, "arch": ctx.model.architecture}
    return None


def _deprecated(ctx: Context) -> Facts | None:
    method = _method(ctx)
    if method is not None and method.alias_of is not None:
        return {"method": method.name, "alias": method.alias_of}
    return None


def _many_tokens(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    layers = ctx.model.mtp_layers
    if spec is not None and _resolved(ctx) == MTP and layers and spec.num_speculative_tokens > MTP_TOKENS_WITHOUT_REUSE:
        return {"n": spec.num_speculative_tokens, "layers": layers}
    return None


def _indivisible(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    layers = ctx.model.mtp_layers
    if spec is None or _resolved(ctx) != MTP or not layers:
        return None
    n = spec.num_speculative_tokens
    if n > layers and n % layers:
        return {"n": n, "layers": layers, "ok": ", ".join(str(layers * k) for k in range(1, 4))}
    return None


RULES: tuple[Rule, ...] = (
    Rule("speculative-method-unknown", Severity.ERROR, SPEC,
         "speculative method {method} is not one vLLM {version} accepts",
         "set engine.speculativeConfig.method to one of {valid}",
         "The speculative method is one the release defines.",
         "vLLM exits: the speculative config fails validation (method is a fixed set of names).",
         "vllm/config/speculative.py SpeculativeMethod", _unknown),
    Rule("speculative-draft-model-missing", Severity.ERROR, SPEC,
         "speculative method {method} drafts with a separate model, but speculativeConfig.model is unset",
         "set engine.speculativeConfig.model to the draft's path, or use method mtp (models with MTP "
         "layers) or ngram",
         "EAGLE, EAGLE-3, Medusa, MLP-speculator and draft_model methods name a draft model.",
         "vLLM exits: \"num_speculative_tokens was provided but without speculative model\".",
         SRC, _draft_missing),
    Rule("speculative-mtp-unsupported", Severity.ERROR, SPEC,
         "speculative method {method} needs multi-token-prediction layers; {arch} has none",
         "use method ngram or an EAGLE draft model, or remove engine.speculativeConfig",
         "`mtp` speculative decoding only for models with MTP layers.",
         "The model's config is not turned into an MTP draft, so vLLM exits: \"Unsupported speculative "
         "method: 'mtp'\".",
         f"{SRC}; SpeculativeConfig.hf_config_override", _mtp_without_layers),
    Rule("speculative-method-deprecated", Severity.WARNING, SPEC,
         "speculative method {method} is deprecated",
         "set engine.speculativeConfig.method: {alias}",
         "Per-model MTP method names (qwen3_next_mtp, qwen3_5_mtp, deepseek_mtp, ...).",
         "vLLM logs \"method ... is deprecated and replaced with mtp\" and runs mtp; the names may go.",
         SRC, _deprecated),
    Rule("speculative-tokens-many", Severity.WARNING, SPEC,
         "{n} speculative tokens rerun the model's {layers} MTP layer(s) within each step",
         "use numSpeculativeTokens 1 unless measured acceptance rates justify more",
         f"MTP with numSpeculativeTokens above {MTP_TOKENS_WITHOUT_REUSE}.",
         "vLLM warns that reusing the MTP layer lowers acceptance; each rejected token costs compute.",
         SRC, _many_tokens),
    Rule("speculative-tokens-indivisible", Severity.ERROR, SPEC,
         "{n} speculative tokens do not divide by the model's {layers} MTP layers",
         "set engine.speculativeConfig.numSpeculativeTokens to at most {layers}, or a multiple: {ok}",
         "MTP tokens beyond the model's MTP layers come in whole multiples of them.",
         "vLLM exits: \"num_speculative_tokens:N must be divisible by n_predict=M\".",
         SRC, _indivisible),
)
