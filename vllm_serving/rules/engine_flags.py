"""Engine flags and environment: speculative decoding, parsers, env vars, remote code."""

from __future__ import annotations

from vllm_serving.engine.names import (
    KNOWN_ENV,
    KNOWN_ENV_PREFIXES,
    NATIVE_ARCHITECTURES,
    OBSOLETE_ENV,
    REASONING_PARSERS,
    TOOL_PARSERS,
)
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule

SPEC = config_key("engine", "speculativeConfig")
TOOL = config_key("engine", "toolCallParser")
REASONING = config_key("engine", "reasoningParser")
ENV = config_key("engine", "env")
MAX_SPECULATIVE_TOKENS = 3


def _method(ctx: Context) -> str | None:
    spec = ctx.engine.speculative_config
    return None if spec is None else spec.method


def _mtp_without_layers(ctx: Context) -> Facts | None:
    method = _method(ctx)
    if method is not None and method.endswith("mtp") and ctx.model.mtp_layers == 0:
        return {"method": method, "arch": ctx.model.architecture}
    return None


def _deprecated_method(ctx: Context) -> Facts | None:
    method = _method(ctx)
    if method is not None and method != "mtp" and method.endswith("_mtp"):
        return {"method": method}
    return None


def _many_tokens(ctx: Context) -> Facts | None:
    spec = ctx.engine.speculative_config
    if spec is not None and spec.num_speculative_tokens > MAX_SPECULATIVE_TOKENS:
        return {"n": spec.num_speculative_tokens, "layers": ctx.model.mtp_layers}
    return None


def _parser_without_auto(ctx: Context) -> Facts | None:
    parser = ctx.engine.tool_call_parser
    if parser is not None and not ctx.engine.enable_auto_tool_choice:
        return {"parser": parser}
    return None


def _auto_without_parser(ctx: Context) -> Facts | None:
    if ctx.engine.enable_auto_tool_choice and ctx.engine.tool_call_parser is None:
        return {"fits": _fitting(TOOL_PARSERS, ctx.model.family)}
    return None


def _unknown_tool(ctx: Context) -> Facts | None:
    parser = ctx.engine.tool_call_parser
    if parser is not None and parser not in TOOL_PARSERS:
        return {"parser": parser, "fits": _fitting(TOOL_PARSERS, ctx.model.family)}
    return None


def _unknown_reasoning(ctx: Context) -> Facts | None:
    parser = ctx.engine.reasoning_parser
    if parser is not None and parser not in REASONING_PARSERS:
        return {"parser": parser, "fits": _fitting(REASONING_PARSERS, ctx.model.family)}
    return None


def _fitting(table: dict[str, str | None] | dict[str, str], family: str) -> str:
    names = sorted(name for name, fam in table.items() if fam == family)
    return ", ".join(names) if names else "see vLLM's docs for this model"


def _other_family(table: dict[str, str | None] | dict[str, str], parser: str | None,
                  family: str) -> Facts | None:
    owner = table.get(parser or "")
    if parser is not None and owner is not None and owner != family:
        return {"parser": parser, "owner": owner, "family": family, "fits": _fitting(table, family)}
    return None


def _reasoning_family(ctx: Context) -> Facts | None:
    return _other_family(REASONING_PARSERS, ctx.engine.reasoning_parser, ctx.model.family)


def _tool_family(ctx: Context) -> Facts | None:
    return _other_family(TOOL_PARSERS, ctx.engine.tool_call_parser, ctx.model.family)


def _obsolete_env(ctx: Context) -> Facts | None:
    names = sorted(name for name in ctx.engine.env if name in OBSOLETE_ENV)
    if names:
        return {"names": ", ".join(names), "fixes": "; ".join(f"{n}: {OBSOLETE_ENV[n]}" for n in names)}
    return None


def _unknown_env(ctx: Context) -> Facts | None:
    names = sorted(
        name for name in ctx.engine.env
        if name.startswith("VLLM_") and name not in OBSOLETE_ENV and name not in KNOWN_ENV
        and not name.startswith(KNOWN_ENV_PREFIXES)
    )
    return {"names": ", ".join(names)} if names else None


def _remote_code(ctx: Context) -> Facts | None:
    native = ctx.model.architecture in NATIVE_ARCHITECTURES or ctx.model.min_vllm_version is not None
    if ctx.engine.trust_remote_code and native:
        return {"arch": ctx.model.architecture}
    return None


RULES: tuple[Rule, ...] = (
    Rule("speculative-mtp-unsupported", Severity.ERROR, SPEC,
         "speculative method {method} needs multi-token-prediction layers; {arch} has none",
         "use method ngram or an EAGLE draft model, or remove engine.speculativeConfig",
         "`mtp` speculative decoding only for models with MTP layers.",
         "vLLM finds no MTP weights to build the draft from and fails to load it.",
         "vllm-facts.md, Qwen3.5-27B; vllm/config/speculative.py", _mtp_without_layers),
    Rule("speculative-method-deprecated", Severity.WARNING, SPEC,
         "speculative method {method} is deprecated",
         "set engine.speculativeConfig.method: mtp",
         "Per-model MTP method names (qwen3_next_mtp, qwen3_5_mtp, deepseek_mtp, ...).",
         "They were merged into `mtp` (vllm#25232) and log a deprecation; they may be removed.",
         "vllm-facts.md, Qwen3.5-27B; vllm#25232", _deprecated_method),
    Rule("speculative-tokens-many", Severity.WARNING, SPEC,
         "{n} speculative tokens from a model with {layers} MTP layer(s)",
         "use numSpeculativeTokens 1-3 unless measured acceptance rates justify more",
         f"numSpeculativeTokens above {MAX_SPECULATIVE_TOKENS}.",
         "Beyond the MTP layers vLLM reuses them; acceptance drops and each rejected token "
         "costs compute (vLLM warns).",
         "vllm-facts.md, Qwen3.5-27B", _many_tokens),
    Rule("tool-parser-without-auto-choice", Severity.ERROR, TOOL,
         "toolCallParser {parser} is set but enableAutoToolChoice is off",
         "set engine.enableAutoToolChoice: true (or remove toolCallParser)",
         "A tool-call parser without auto tool choice.",
         "Requests with tool_choice auto are rejected (400), so clients get no tool_calls "
         "(the seed's troubleshooting table).",
         "seed troubleshooting table; vllm/entrypoints/openai/cli_args.py", _parser_without_auto),
    Rule("auto-tool-choice-without-parser", Severity.ERROR, TOOL,
         "enableAutoToolChoice is on but no toolCallParser is set",
         "set engine.toolCallParser, for this model: {fits}",
         "Auto tool choice with no tool-call parser.",
         "vLLM exits: \"--enable-auto-tool-choice requires --tool-call-parser\".",
         "vllm/entrypoints/openai/cli_args.py validate_parsed_serve_args", _auto_without_parser),
    Rule("tool-parser-unknown", Severity.WARNING, TOOL,
         "toolCallParser {parser} is not a vLLM tool-call parser",
         "use one vLLM registers, for this model: {fits}",
         "The tool-call parser name exists in vLLM (v0.19 registry).",
         "vLLM exits at startup with \"invalid tool call parser\"; a warning since the list may lag.",
         "vllm/tool_parsers/__init__.py", _unknown_tool),
    Rule("reasoning-parser-unknown", Severity.WARNING, REASONING,
         "reasoningParser {parser} is not a vLLM reasoning parser",
         "use one vLLM registers, for this model: {fits}",
         "The reasoning parser name exists in vLLM (v0.19 registry).",
         "vLLM exits at startup naming the valid parsers; a warning since the list may lag.",
         "vllm/reasoning/__init__.py", _unknown_reasoning),
    Rule("reasoning-parser-other-family", Severity.WARNING, REASONING,
         "reasoningParser {parser} is for {owner} models; this is a {family} model",
         "use {fits}",
         "The reasoning parser matches the model family.",
         "A parser for other markup leaves thinking in `content` or swallows the answer.",
         "vllm-facts.md, Qwen3.5-27B (parsers)", _reasoning_family),
    Rule("tool-parser-other-family", Severity.WARNING, TOOL,
         "toolCallParser {parser} is for {owner} models; this is a {family} model",
         "use {fits}",
         "The tool-call parser matches the model family (hermes/pythonic fit many).",
         "The parser does not recognise the model's tool-call markup: no tool_calls.",
         "vllm-facts.md, Qwen3.5-27B (parsers)", _tool_family),
    Rule("env-obsolete", Severity.WARNING, ENV,
         "engine.env sets {names}, which vLLM no longer reads",
         "{fixes}",
         "Obsolete vLLM environment variables (VLLM_USE_V1, ...).",
         "vLLM only logs \"Unknown vLLM environment variable detected\"; the setting does nothing.",
         "vllm-facts.md, Engine and environment; vllm#28204", _obsolete_env),
    Rule("env-unknown", Severity.WARNING, ENV,
         "engine.env sets {names}, not among vLLM's environment variables",
         "check the spelling against vllm/envs.py; remove variables vLLM does not read",
         "VLLM_* variables vLLM v0.19 does not define.",
         "A misspelt variable is ignored silently apart from one log line.",
         "vllm/envs.py", _unknown_env),
    Rule("trust-remote-code-native", Severity.WARNING, config_key("engine", "trustRemoteCode"),
         "trustRemoteCode runs Python shipped with the weights, but vLLM runs {arch} natively",
         "set engine.trustRemoteCode: false",
         "trust_remote_code for an architecture vLLM implements itself.",
         "It only widens what could run inside the container.",
         "vllm/model_executor/models/registry.py", _remote_code),
)
