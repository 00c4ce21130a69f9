"""Engine flags and environment: parsers, env vars, remote code.

Parser and variable names are checked against the registries of the image's release
(`engine/release_registry.py`); which model family a parser fits is this project's knowledge
(`engine/names.py`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from vllm_serving.engine import release_facts
from vllm_serving.engine.names import NATIVE_ARCHITECTURES, OBSOLETE_ENV, REASONING_PARSER_FAMILY, TOOL_PARSER_FAMILY
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import KEY, Context, Facts, Rule

TOOL = config_key("engine", "toolCallParser")
REASONING = config_key("engine", "reasoningParser")
ENV = config_key("engine", "env")
# Inside the container the GPUs Docker (hardware.deviceIds) or Kubernetes hands over are
# numbered from 0; a host index here selects a GPU the container does not have.
GPU_SELECTION_ENV = "CUDA_VISIBLE_DEVICES"
# Read by the NVIDIA container runtime (not by CUDA) to choose which GPUs it mounts into the
# container: set by hand it competes with the device request, and on Kubernetes an unprivileged
# pod gets GPUs the scheduler gave other pods (NVIDIA Container Toolkit,
# accept-nvidia-visible-devices-envvar-when-unprivileged, on by default).
RUNTIME_GPU_ENV = ("NVIDIA_VISIBLE_DEVICES",)
API_SERVER_SRC = "vllm/entrypoints/openai/api_server.py validate_api_server_args"


def _fitting(families: Mapping[str, str | None], names: Collection[str], family: str) -> str:
    fits = sorted(name for name in names if families.get(name) == family)
    return ", ".join(fits) if fits else "see vLLM's docs for this model"


def _tool_fits(ctx: Context) -> str:
    return _fitting(TOOL_PARSER_FAMILY, ctx.release.tool_parsers, ctx.model.family)


def _reasoning_fits(ctx: Context) -> str:
    return _fitting(REASONING_PARSER_FAMILY, ctx.release.reasoning_parsers, ctx.model.family)


def _plugin(ctx: Context, flag: str) -> bool:
    """A parser plugin may register names the release does not have."""
    return bool(ctx.extra_values(flag))


def _parser_without_auto(ctx: Context) -> Facts | None:
    parser = ctx.engine.tool_call_parser
    if parser is not None and not ctx.engine.enable_auto_tool_choice:
        return {"parser": parser}
    return None


def _auto_without_parser(ctx: Context) -> Facts | None:
    if ctx.engine.enable_auto_tool_choice and ctx.engine.tool_call_parser is None:
        return {"fits": _tool_fits(ctx)}
    return None


def _unknown_tool(ctx: Context) -> Facts | None:
    parser = ctx.engine.tool_call_parser
    # Without auto tool choice vLLM never loads the parser, so any name starts.
    if parser is None or not ctx.engine.enable_auto_tool_choice or parser in ctx.release.tool_parsers:
        return None
    if _plugin(ctx, "--tool-parser-plugin"):
        return None
    return {"parser": parser, "version": ctx.release.tag, "fits": _tool_fits(ctx)}


def _unknown_reasoning(ctx: Context) -> Facts | None:
    parser = ctx.engine.reasoning_parser
    if parser is None or parser in ctx.release.reasoning_parsers or _plugin(ctx, "--reasoning-parser-plugin"):
        return None
    return {"parser": parser, "version": ctx.release.tag, "fits": _reasoning_fits(ctx)}


def _other_family(families: Mapping[str, str | None], parser: str | None, family: str, fits: str) -> Facts | None:
    owner = families.get(parser) if parser else None
    if parser is not None and owner is not None and owner != family:
        return {"parser": parser, "owner": owner, "family": family, "fits": fits}
    return None


def _reasoning_family(ctx: Context) -> Facts | None:
    return _other_family(REASONING_PARSER_FAMILY, ctx.engine.reasoning_parser, ctx.model.family,
                         _reasoning_fits(ctx))


def _tool_family(ctx: Context) -> Facts | None:
    return _other_family(TOOL_PARSER_FAMILY, ctx.engine.tool_call_parser, ctx.model.family, _tool_fits(ctx))


def _obsolete_env(ctx: Context) -> Facts | None:
    names = sorted(name for name in ctx.engine.env if name in OBSOLETE_ENV)
    if names:
        return {"names": ", ".join(names), "fixes": "; ".join(f"{n}: {OBSOLETE_ENV[n]}" for n in names)}
    return None


def _unknown_env(ctx: Context) -> Facts | None:
    names = sorted(
        name for name in ctx.engine.env
        if name.startswith("VLLM_") and name not in OBSOLETE_ENV and name not in ctx.release.env_vars
    )
    return {"names": ", ".join(names), "version": ctx.release.tag} if names else None


def _bad_value(value: str, check: release_facts.EnvValue) -> str | None:
    """Why envs.py's reader refuses the value, or None."""
    if check.choices is not None:
        wanted = [v.strip() for v in value.split(",") if v.strip()] if check.is_list else [value]
        known = check.choices if check.case_sensitive else tuple(c.lower() for c in check.choices)
        bad = [v for v in wanted if (v if check.case_sensitive else v.lower()) not in known]
        return f"takes {'a comma list of ' if check.is_list else 'one of '}{', '.join(check.choices)}" if bad else None
    parse = {"int": int, "float": float}.get(check.type or "")
    if parse is None:
        return None
    try:
        parse(value)
    except ValueError:
        return f"must be {'a whole number' if check.type == 'int' else 'a number'}"
    return None


def _env_value(ctx: Context) -> list[Facts] | None:
    checks = release_facts.env_values(ctx.release)
    hits: list[Facts] = [{KEY: config_key("engine", "env", name), "name": name, "why": why,
                          "version": ctx.release.tag}
            for name, value in sorted(ctx.engine.env.items())
            if name in checks and (why := _bad_value(value, checks[name])) is not None]
    return hits or None


PARTITION_ENV = "VLLM_PP_LAYER_PARTITION"


def _layer_partition(ctx: Context) -> Facts | None:
    """`get_pp_indices`: integers, one per pipeline stage, summing to the model's layers."""
    value = ctx.engine.env.get(PARTITION_ENV)
    if value is None or PARTITION_ENV not in release_facts.env_model_checks(ctx.release):
        return None
    layers = ctx.model.num_hidden_layers
    try:
        parts = [int(p) for p in value.split(",")]
    except ValueError:
        return {"value": value[:40], "why": "is not a comma list of whole numbers", "pp": ctx.pp, "layers": layers}
    if len(parts) != ctx.pp:
        return {"value": value[:40], "why": f"gives {len(parts)} stages for {ctx.pp}", "pp": ctx.pp, "layers": layers}
    if sum(parts) != layers:
        return {"value": value[:40], "why": f"sums to {sum(parts)} layers, the model has {layers}", "pp": ctx.pp,
                "layers": layers}
    return None


def _gpu_selection_env(ctx: Context) -> Facts | None:
    return {"name": GPU_SELECTION_ENV} if GPU_SELECTION_ENV in ctx.engine.env else None


def _runtime_gpu_env(ctx: Context) -> Facts | None:
    name = next((n for n in RUNTIME_GPU_ENV if n in ctx.engine.env), None)
    return None if name is None else {"name": name, "value": ctx.engine.env[name][:20]}


def _remote_code(ctx: Context) -> Facts | None:
    native = ctx.model.architecture in NATIVE_ARCHITECTURES or ctx.model.min_vllm_version is not None
    if ctx.engine.trust_remote_code and native:
        return {"arch": ctx.model.architecture}
    return None


RULES: tuple[Rule, ...] = (
    Rule("tool-parser-without-auto-choice", Severity.WARNING, TOOL,
         "toolCallParser {parser} is set but enableAutoToolChoice is off, so vLLM never loads it",
         "set engine.enableAutoToolChoice: true (or remove toolCallParser)",
         "A tool-call parser without auto tool choice.",
         "vLLM starts, ignores the parser, and answers tool_choice auto with 400 (\"auto\" tool choice "
         "requires --enable-auto-tool-choice and --tool-call-parser); clients get no tool_calls.",
         "vllm/parser/parser_manager.py ParserManager.get_tool_parser; "
         "vllm/entrypoints/serve/render/serving.py (tool_choice validation)", _parser_without_auto),
    Rule("auto-tool-choice-without-parser", Severity.ERROR, TOOL,
         "enableAutoToolChoice is on but no toolCallParser is set",
         "set engine.toolCallParser, for this model: {fits}",
         "Auto tool choice with no tool-call parser.",
         "vLLM exits: \"--enable-auto-tool-choice requires --tool-call-parser\".",
         "vllm/entrypoints/openai/cli_args.py validate_parsed_serve_args", _auto_without_parser),
    Rule("tool-parser-unknown", Severity.ERROR, TOOL,
         "toolCallParser {parser} is not a tool-call parser of vLLM {version}",
         "use one the release registers, for this model: {fits} (or load it with --tool-parser-plugin)",
         "With auto tool choice, the tool-call parser is one the release registers (a "
         "--tool-parser-plugin in extraArgs may add names).",
         "vLLM exits at startup: \"invalid tool call parser: ... (chose from {...})\".",
         f"{API_SERVER_SRC}; vllm/tool_parsers/__init__.py _TOOL_PARSERS_TO_REGISTER", _unknown_tool),
    Rule("reasoning-parser-unknown", Severity.ERROR, REASONING,
         "reasoningParser {parser} is not a reasoning parser of vLLM {version}",
         "use one the release registers, for this model: {fits} (or load it with --reasoning-parser-plugin)",
         "The reasoning parser is one the release registers (a --reasoning-parser-plugin in extraArgs "
         "may add names).",
         "vLLM exits at startup: \"invalid reasoning parser: ... (chose from {...})\".",
         f"{API_SERVER_SRC}; vllm/reasoning/__init__.py _REASONING_PARSERS_TO_REGISTER", _unknown_reasoning),
    Rule("reasoning-parser-other-family", Severity.WARNING, REASONING,
         "reasoningParser {parser} is for {owner} models; this is a {family} model",
         "use {fits}",
         "The reasoning parser matches the model family.",
         "A parser for other markup leaves thinking in `content` or swallows the answer.",
         "vllm_serving/engine/names.py REASONING_PARSER_FAMILY (one parser module per family in vllm/reasoning/)",
         _reasoning_family),
    Rule("tool-parser-other-family", Severity.WARNING, TOOL,
         "toolCallParser {parser} is for {owner} models; this is a {family} model",
         "use {fits}",
         "The tool-call parser matches the model family (hermes/pythonic/xlam fit many).",
         "The parser does not recognise the model's tool-call markup: no tool_calls.",
         "vllm_serving/engine/names.py TOOL_PARSER_FAMILY (one parser module per family in vllm/tool_parsers/)",
         _tool_family),
    Rule("env-obsolete", Severity.WARNING, ENV,
         "engine.env sets {names}, which vLLM no longer reads",
         "{fixes}",
         "Obsolete vLLM environment variables (VLLM_USE_V1, ...).",
         "vLLM only logs \"Unknown vLLM environment variable detected\"; the setting does nothing.",
         "vllm/envs.py validate_environ (environment_variables); vllm#28204", _obsolete_env),
    Rule("env-unknown", Severity.WARNING, ENV,
         "engine.env sets {names}, not among vLLM {version}'s environment variables",
         "check the spelling against vllm/envs.py; remove variables vLLM does not read",
         "VLLM_* variables the release does not define.",
         "A misspelt variable is ignored apart from one log line (an error with "
         "--fail-on-environ-validation).",
         "vllm/envs.py validate_environ (environment_variables)", _unknown_env),
    Rule("env-value-invalid", Severity.ERROR, ENV,
         "{name} {why} (vLLM {version} reads it when the engine starts)",
         "set engine.env.{name} to a value it takes, or remove it",
         "A VLLM_* variable whose value the release's envs.py refuses (env_with_choices lists, int()/float() "
         "parses); every variable is read when the engine core starts.",
         "vLLM exits at start-up: \"Invalid value '...' for VLLM_...\" or a ValueError from int().",
         "vllm/envs.py env_with_choices, environment_variables; vllm/v1/engine/core.py (enable_envs_cache)",
         _env_value),
    Rule("env-layer-partition", Severity.ERROR, config_key("engine", "env", PARTITION_ENV),
         "VLLM_PP_LAYER_PARTITION={value} {why}",
         "give {pp} comma-separated layer counts summing to {layers}, or remove it (vLLM splits evenly)",
         "VLLM_PP_LAYER_PARTITION names one layer count per pipeline stage, summing to the model's layers.",
         "vLLM exits while building the model: \"sum(partitions)=N does not match num_hidden_layers=M\".",
         "vllm/distributed/utils.py get_pp_indices", _layer_partition),
    Rule("env-gpu-selection", Severity.ERROR, ENV,
         "engine.env sets {name}, but inside the container the GPUs are numbered 0 to n-1",
         "remove it from engine.env and choose the host's GPUs with hardware.deviceIds",
         "CUDA_VISIBLE_DEVICES in engine.env.",
         "Host indices select GPUs the container does not have: vLLM finds too few GPUs (or none) and "
         "exits, or silently uses fewer.",
         "vllm/envs.py CUDA_VISIBLE_DEVICES; vllm/platforms/cuda.py CudaPlatformBase.device_control_env_var",
         _gpu_selection_env),
    Rule("env-gpu-runtime-selection", Severity.ERROR, ENV,
         "engine.env sets {name}={value}, which the NVIDIA container runtime reads to choose the GPUs it mounts: "
         "it competes with the GPUs the stack requests and can expose GPUs other workloads hold",
         "remove it from engine.env: hardware.deviceIds (Docker) or the GPU request (Kubernetes) selects the GPUs",
         "NVIDIA_VISIBLE_DEVICES in engine.env.",
         "The container sees other GPUs than the plan (on Kubernetes, `all` reaches GPUs allocated to other pods).",
         "NVIDIA Container Toolkit (NVIDIA_VISIBLE_DEVICES; accept-nvidia-visible-devices-envvar-when-unprivileged); "
         "NVIDIA k8s-device-plugin DEVICE_LIST_STRATEGY; vllm_serving/rules/engine_flags.py RUNTIME_GPU_ENV "
         "(vLLM itself never reads the variable)", _runtime_gpu_env),
    Rule("trust-remote-code-native", Severity.WARNING, config_key("engine", "trustRemoteCode"),
         "trustRemoteCode runs Python shipped with the weights, but vLLM runs {arch} natively",
         "set engine.trustRemoteCode: false",
         "trust_remote_code for an architecture vLLM implements itself.",
         "It only widens what could run inside the container.",
         "vllm/model_executor/models/registry.py", _remote_code),
)
