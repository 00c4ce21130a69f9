"""Speculative decoding: the method exists in the release, has its draft, and fits the model.

Most of it is `SpeculativeConfig` in vllm/config/speculative.py, read from the release's registry:
which methods exist (`SpeculativeMethod`), which need a draft `model`, the per-model MTP names
folded into `mtp`, the model types an MTP draft is made from (`hf_config_override` rewrites
qwen3_next to qwen3_next_mtp ...: a type it does not rewrite has no MTP draft), and the checks on
num_speculative_tokens against the draft's layers (`n_predict`, read from the key the rewrite
names; unset, vLLM skips the check). A separate draft model (method draft_model) on a target
that takes multimodal inputs is refused by the proposer (v1/spec_decode/eagle.py
`_raise_if_multimodal`) in the releases that say so.
"""

from __future__ import annotations

import json

from vllm_serving.engine import release_facts
from vllm_serving.engine.release_facts import MtpRewrite
from vllm_serving.engine.release_records import SpeculativeMethod
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


def mtp_rewrite(ctx: Context) -> MtpRewrite | None:
    """The release's MTP rewrite for the target (by model type, else architecture)."""
    facts = release_facts.speculative(ctx.release)
    if facts.by_model_type is None:
        return None
    return facts.by_model_type.get(ctx.model.model_type) or facts.by_architecture.get(ctx.model.architecture)


def has_mtp_draft(ctx: Context) -> bool:
    """Whether vLLM can make an MTP draft of the target: the release rewrites its type (and the
    layer key it requires is positive); without rewrites in the registry, the catalog's MTP layers."""
    if release_facts.speculative(ctx.release).by_model_type is None:
        return ctx.model.mtp_layers > 0
    rewrite = mtp_rewrite(ctx)
    return rewrite is not None and (rewrite.requires_positive is None or ctx.model.mtp_layers > 0)


def n_predict(ctx: Context) -> int | None:
    """The draft's `n_predict`: the model's MTP layers, else the rewrite's default (None: vLLM
    checks no token count)."""
    if ctx.model.mtp_layers:
        return ctx.model.mtp_layers
    rewrite = mtp_rewrite(ctx)
    return rewrite.n_predict_default if rewrite is not None else None


def _mtp_without_layers(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    if spec is not None and _resolved(ctx) == MTP and not has_mtp_draft(ctx):
        return {"method": spec.method, "arch": ctx.model.architecture, "type": ctx.model.model_type,
                "version": ctx.release.tag}
    return None


def _deprecated(ctx: Context) -> Facts | None:
    method = _method(ctx)
    if method is not None and method.alias_of is not None:
        return {"method": method.name, "alias": method.alias_of}
    return None


def _many_tokens(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    if spec is None or _resolved(ctx) != MTP or not has_mtp_draft(ctx):
        return None
    layers = n_predict(ctx) or 1  # the MTP model builds one layer when the config names none
    if spec.num_speculative_tokens > MTP_TOKENS_WITHOUT_REUSE:
        return {"n": spec.num_speculative_tokens, "layers": layers}
    return None


def _indivisible(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    layers = n_predict(ctx)
    if spec is None or _resolved(ctx) != MTP or not layers or not has_mtp_draft(ctx):
        return None
    n = spec.num_speculative_tokens
    if n > layers and n % layers:
        return {"n": n, "layers": layers, "ok": ", ".join(str(layers * k) for k in range(1, 4))}
    return None


LANGUAGE_ONLY = "--language-model-only"
MM_LIMITS = "--limit-mm-per-prompt"


def text_only(ctx: Context) -> bool:
    """Multimodal inputs switched off: --language-model-only, or every modality limited to 0
    (`MultiModalConfig.get_limit_per_prompt`, as `supports_multimodal_inputs` reads it)."""
    if ctx.extra_switch(LANGUAGE_ONLY) is True:
        return True
    limits = [v for _, v in ctx.extra_values(MM_LIMITS)]
    try:
        parsed = json.loads(limits[-1]) if limits else None
    except ValueError:
        return False
    return isinstance(parsed, dict) and bool(parsed) and all(
        (v.get("count") if isinstance(v, dict) else v) == 0 for v in parsed.values())


def _draft_on_multimodal(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    facts = release_facts.speculative(ctx.release)
    multimodal = release_facts.models(ctx.release).multimodal_architectures or frozenset()
    if (spec is None or not facts.draft_model_refuses_multimodal or _resolved(ctx) not in facts.draft_model_methods
            or ctx.model.architecture not in multimodal or text_only(ctx)):
        return None
    return {"method": spec.method, "arch": ctx.model.architecture, "version": ctx.release.tag}


def _aux_target(ctx: Context) -> Facts | None:
    """`_verify_args`: eagle3 drafts from the target's auxiliary hidden states, which only the text
    models the release lists give (matched as substrings of the text config's model_type)."""
    spec = ctx.engine.speculative_config
    facts = release_facts.speculative(ctx.release)
    if spec is None or _resolved(ctx) not in facts.aux_hidden_states_methods:
        return None
    text_type = ctx.model.language_model_type
    if any(listed in text_type for listed in facts.aux_hidden_states_model_types):
        return None
    return {"method": spec.method, "type": text_type, "version": ctx.release.tag,
            "listed": ", ".join(facts.aux_hidden_states_model_types)}


ASYNC = "--async-scheduling"


def _async_scheduling(ctx: Context) -> Facts | None:
    """`VllmConfig.__post_init__`: --async-scheduling given, with a method it does not take."""
    spec = ctx.engine.speculative_config
    allowed = release_facts.speculative(ctx.release).async_scheduling_methods
    method = _resolved(ctx)
    if spec is None or allowed is None or method is None or method in allowed or ctx.extra_switch(ASYNC) is not True:
        return None
    return {"method": spec.method, "version": ctx.release.tag, "ok": ", ".join(sorted(allowed))}


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
         "speculative method {method} needs an MTP draft, and vLLM {version} makes none of {arch} "
         "(model type {type})",
         "use method ngram or an EAGLE draft model, or remove engine.speculativeConfig",
         "`mtp` only for model types the release turns into an MTP draft (hf_config_override: qwen3_next -> "
         "qwen3_next_mtp, qwen3_5 -> qwen3_5_mtp, deepseek_v3 -> deepseek_mtp ...).",
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
    Rule("speculative-draft-model-multimodal", Severity.ERROR, SPEC,
         "speculative method {method} runs a separate draft model, which vLLM {version} refuses for a "
         "multimodal target ({arch})",
         "add --language-model-only to engine.extraArgs (text only), or use method mtp or eagle3",
         "A draft_model draft on a target taking multimodal inputs (unless --language-model-only or "
         "--limit-mm-per-prompt zeroes every modality).",
         "vLLM exits when the drafter starts: \"Speculative Decoding with draft models or parallel drafting "
         "does not support multimodal models yet\".",
         "vllm/v1/spec_decode/eagle.py SpecDecodeBaseProposer._raise_if_multimodal; vllm/multimodal/registry.py "
         "MultiModalRegistry.supports_multimodal_inputs; vllm/config/multimodal.py "
         "MultiModalConfig.get_limit_per_prompt",
         _draft_on_multimodal),
    Rule("speculative-target-unsupported", Severity.ERROR, SPEC,
         "speculative method {method} drafts from the target's auxiliary hidden states, which vLLM {version} "
         "takes only from {listed} models, not from model type {type}",
         "use method ngram, mtp (models with MTP layers) or draft_model, or serve a listed model",
         "eagle3 (and extract_hidden_states) only on targets whose text model type the release lists.",
         "vLLM exits while building the speculative config: \"eagle3 is only supported for [...] models\".",
         "vllm/config/speculative.py SpeculativeConfig._verify_args (aux_hidden_states_supported)", _aux_target),
    Rule("speculative-async-scheduling", Severity.ERROR, SPEC,
         "--async-scheduling in engine.extraArgs does not take speculative method {method} in vLLM {version}",
         "remove --async-scheduling (vLLM then turns it off for this method itself), or use one of: {ok}",
         "--async-scheduling given explicitly with a speculative method it does not support (ngram, suffix, "
         "medusa ...).",
         "vLLM exits while building its config: \"Currently, async scheduling is only supported with "
         "EAGLE/MTP/Draft Model/NGram GPU kind of speculative decoding\".",
         "vllm/config/vllm.py VllmConfig.__post_init__", _async_scheduling),
)
