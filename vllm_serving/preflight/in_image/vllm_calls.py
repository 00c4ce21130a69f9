"""The engine check's child process: the image's own vLLM, called as `vllm serve` calls it, up to
and not including starting the engine.

`python3 -c PROGRAM --engine-child FD [--vllm-entry-points JSON] -- ARGV` writes one JSON document
to FD: vLLM's version, each step's outcome and the facts the memory check reads. The steps, as
vllm/entrypoints/cli/main.py, cli/serve.py and the API server's setup_server and
build_async_engine_client take them (v0.10 to v0.34):

- parse: `FlexibleArgumentParser` with the `serve` subparser `ServeSubcommand.subparser_init` adds
  (`make_arg_parser`), `parse_args(["serve", *ARGV])`: the argv rewriting, choices, types;
- validate: `ServeSubcommand.validate` (`validate_parsed_serve_args`);
- api-server: `validate_api_server_args` (the tool-call and reasoning parser names);
- config: `AsyncEngineArgs.from_cli_args(args).create_engine_config(usage_context=OPENAI_API_SERVER)`
  (`headless=True` for a headless node): reads the weights' config.json and detects the platform
  (NVML on CUDA); it loads no weights and starts no worker;
- attention: `get_attn_backend(...)` under `set_current_vllm_config(config)`, asked for the model's
  attention layers as an `Attention` layer asks when the model is built.

Entry points are looked up where the project's registry recorded them for the release (the
generator follows vLLM's own imports: tools/vllm_release/entry_points.py), then in CANDIDATES, so a
release the project has no registry for is checked too; a step whose entry point is nowhere is
reported as not run, never guessed.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import os
from collections.abc import Callable
from typing import Any

MESSAGE_CHARS = 4000  # the result goes through a pipe the parent reads after the child exited
CANDIDATES: dict[str, tuple[str, ...]] = {
    "argument_parser": ("vllm.utils.argparse_utils:FlexibleArgumentParser", "vllm.utils:FlexibleArgumentParser"),
    "serve_subcommand": ("vllm.entrypoints.cli.serve:ServeSubcommand",),
    "serve_validation": ("vllm.entrypoints.common.cli_args:validate_parsed_serve_args",
                         "vllm.entrypoints.launchers.cli_args:validate_parsed_serve_args",
                         "vllm.entrypoints.openai.cli_args:validate_parsed_serve_args"),
    "api_server_validation": ("vllm.entrypoints.common.cli_args:validate_api_server_args",
                              "vllm.entrypoints.launchers.launcher:validate_api_server_args",
                              "vllm.entrypoints.openai.api_server:validate_api_server_args"),
    "engine_args": ("vllm.engine.arg_utils:AsyncEngineArgs",),
    "usage_context": ("vllm.usage.usage_lib:UsageContext",),
    "config_context": ("vllm.config.vllm:set_current_vllm_config", "vllm.config:set_current_vllm_config"),
    "attention_selector": ("vllm.v1.attention.selector:get_attn_backend", "vllm.attention.selector:get_attn_backend"),
}


class NotRun(Exception):
    """This release has no entry point for the step (or what it needs did not run)."""


class Refused(Exception):
    """vLLM's own judgement, in its words."""


def words(exc: BaseException) -> str:
    """vLLM's exception as a user should read it: the type and message, and for pydantic's
    ValidationError (vLLM's config dataclasses) the ValueError raised inside the config class."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            items = list(errors())
        except Exception:  # not pydantic's errors() after all
            items = []
        if items:
            inner = (items[0].get("ctx") or {}).get("error")
            kind = type(inner).__name__ if isinstance(inner, BaseException) else type(exc).__name__
            title = getattr(exc, "title", "")
            texts = [str(i.get("msg", "")).replace("Value error, ", "", 1) for i in items]
            return f"{kind}{' in ' + title if title else ''}: {'; '.join(texts)}"
    args: tuple[Any, ...] = exc.args
    text = args[0] if len(args) == 1 and isinstance(args[0], str) else str(exc)  # KeyError quotes str()
    return f"{type(exc).__name__}: {text}"


def resolve(name: str, recorded: dict[str, str]) -> tuple[Any, str]:
    """The entry point `name`: where the registry recorded it, else the first candidate present."""
    tried = []
    for spec in dict.fromkeys([*([recorded[name]] if name in recorded else []), *CANDIDATES[name]]):
        module_name, _, attr = spec.partition(":")
        tried.append(spec)
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if module_name == missing or module_name.startswith(missing + "."):
                continue  # this release has no such module
            raise  # vLLM's own module failed to import: the server would fail the same way
        found = getattr(module, attr, None)
        if found is not None:
            return found, spec
    raise NotRun(f"no {name.replace('_', ' ')} in this release (looked for {', '.join(tried)})")


State = dict[str, Any]


def parse(state: State) -> str:
    parser_class, parser_at = resolve("argument_parser", state["recorded"])
    serve_class, serve_at = resolve("serve_subcommand", state["recorded"])
    parser = parser_class(description="vLLM CLI")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    serve = serve_class()
    serve.subparser_init(subparsers)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stderr(printed):
            args = parser.parse_args(["serve", *state["argv"]])
    except SystemExit as exc:  # argparse prints `usage: ...` and `vllm serve: error: ...`, then exits 2
        said = printed.getvalue().strip().splitlines()
        errors = [line.split("error: ", 1)[1] for line in said if "error: " in line]
        raise Refused(f"argparse: {errors[-1] if errors else ' '.join(said) or f'exit code {exc.code}'}") from None
    if getattr(args, "model_tag", None) is not None:  # ServeSubcommand.cmd: the positional model wins
        args.model = args.model_tag
    state.update(args=args, serve=serve)
    return f"{parser_at} with {serve_at}"


def parsed(state: State) -> Any:
    """The parsed arguments, which every later step needs."""
    if "args" not in state:
        raise NotRun("needs the parsed arguments")
    return state["args"]


def validate(state: State) -> str:
    args = parsed(state)
    check = getattr(state["serve"], "validate", None)
    at = "ServeSubcommand.validate"
    if check is None:
        check, at = resolve("serve_validation", state["recorded"])
    check(args)
    return at


def api_server(state: State) -> str:
    args = parsed(state)
    check, at = resolve("api_server_validation", state["recorded"])
    check(args)
    return at


def config(state: State) -> str:
    args = parsed(state)
    engine_args_class, at = resolve("engine_args", state["recorded"])
    usage_context, _ = resolve("usage_context", state["recorded"])
    engine_args = engine_args_class.from_cli_args(args)
    create = engine_args.create_engine_config
    accepted = inspect.signature(create).parameters
    kwargs: dict[str, Any] = {"usage_context": usage_context.OPENAI_API_SERVER} if "usage_context" in accepted else {}
    if getattr(args, "headless", False) and "headless" in accepted:
        kwargs["headless"] = True  # serve.py run_headless: a node that serves no API
    state["config"] = create(**kwargs)
    state["facts"] = facts(state["config"])
    return f"{at}.create_engine_config"


def facts(vllm_config: Any) -> dict[str, Any]:
    """What the memory check and the report need from the engine config."""
    cache, model = vllm_config.cache_config, vllm_config.model_config
    # v0.34 (config/cache.py): None until resolved, 1.0 with the extensible KV cache, else its default
    utilization = getattr(cache, "resolved_gpu_memory_utilization", None) or cache.gpu_memory_utilization
    return {
        "gpu_memory_utilization": utilization,
        # v0.34 (v1/worker/utils.py request_memory): with it, free memory at start is not compared
        "extensible_kv_cache": getattr(cache, "enable_extensible_kv_cache", None) is True,
        "max_model_len": getattr(model, "max_model_len", None),
        "dtype": str(getattr(model, "dtype", "")).replace("torch.", ""),
        "kv_cache_dtype": getattr(cache, "cache_dtype", None),
    }


def attention_arguments(select: Callable[..., Any], vllm_config: Any) -> dict[str, Any]:
    """What an attention layer of this model passes to `get_attn_backend` in this release."""
    model, cache = vllm_config.model_config, vllm_config.cache_config
    derived: dict[str, Callable[[], Any]] = {
        "head_size": model.get_head_size,
        "dtype": lambda: model.dtype,  # layers are built under the model's dtype as torch's default
        "kv_cache_dtype": lambda: cache.cache_dtype,
        "block_size": lambda: cache.block_size,
        "is_attention_free": lambda: False,
        "use_mla": lambda: bool(getattr(model, "use_mla", False)),  # MLAAttention's layers ask with True
        "use_mm_prefix": lambda: bool(getattr(model, "is_mm_prefix_lm", False)),
    }
    arguments = {}
    for name, parameter in inspect.signature(select).parameters.items():
        if name in derived:
            arguments[name] = derived[name]()
        elif parameter.default is inspect.Parameter.empty and parameter.kind not in (
                inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise NotRun(f"get_attn_backend needs `{name}`, which the check cannot derive from the config")
    return arguments


def attention(state: State) -> str:
    if "config" not in state:
        raise NotRun("needs the engine config")
    vllm_config = state["config"]
    if getattr(vllm_config.model_config, "is_attention_free", False):
        raise NotRun("the model has no attention layers")
    select, at = resolve("attention_selector", state["recorded"])
    context, _ = resolve("config_context", state["recorded"])
    arguments = attention_arguments(select, vllm_config)
    with context(vllm_config):
        backend = select(**arguments)
    name = backend.get_name() if hasattr(backend, "get_name") else getattr(backend, "__name__", str(backend))
    state["facts"]["attention_backend"] = name
    return at


STEPS: tuple[tuple[str, Callable[[State], str]], ...] = (
    ("parse", parse), ("validate", validate), ("api-server", api_server), ("config", config),
    ("attention", attention),
)


def run(argv: list[str], recorded: dict[str, str]) -> dict[str, Any]:
    """Every step in order, until vLLM refuses: the result document."""
    result: dict[str, Any] = {"version": None, "steps": [], "facts": {}}
    try:
        vllm = importlib.import_module("vllm")
    except Exception as exc:  # no vLLM, or one that cannot be imported: the server cannot start either
        result["steps"].append({"name": "import", "status": "refused", "detail": words(exc)[:MESSAGE_CHARS]})
        return result
    result["version"] = str(getattr(vllm, "__version__", "(unknown version)"))
    state: State = {"argv": argv, "recorded": recorded, "facts": {}}
    for name, step in STEPS:
        try:
            outcome = {"status": "ok", "detail": step(state)}
        except NotRun as exc:
            outcome = {"status": "not-run", "detail": str(exc)}
        except Refused as exc:
            outcome = {"status": "refused", "detail": str(exc)}
        except (Exception, SystemExit) as exc:
            outcome = {"status": "refused", "detail": words(exc)}
        outcome["detail"] = outcome["detail"][:MESSAGE_CHARS]
        result["steps"].append({"name": name, **outcome})
        if outcome["status"] == "refused":
            break
    result["facts"] = state["facts"]
    return result


def child_main(fd: int, argv: list[str], recorded: dict[str, str]) -> int:
    """Run the steps and write the result to `fd` (a crash leaves it empty: the parent says so)."""
    result = run(argv, recorded)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(result, out, default=str)
    return 0
