"""The engine check's child process: the image's own vLLM, called as `vllm serve` calls it, up to
and not including starting the engine.

`python3 -c PROGRAM --engine-child FD [--vllm-entry-points JSON] -- ARGV` writes one JSON document
to FD: vLLM's version, each step's outcome and the facts the memory check reads. The steps, as
vllm/entrypoints/cli/main.py, cli/serve.py and the API server's setup_server and
build_async_engine_client take them (v0.10 to v0.34):

- parse: `cli_env_setup()` (main.py: VLLM_WORKER_MULTIPROC_METHOD=spawn unless set, which config
  checks read, e.g. v0.34 config/vllm.py refuses `--mm-tensor-ipc torch_shm` without it), then
  `FlexibleArgumentParser` with the `serve` subparser `ServeSubcommand.subparser_init` adds
  (`make_arg_parser`), `parse_args(["serve", *ARGV])`: the argv rewriting, `--config` YAML, choices,
  types; the positional model tag wins over `--model` (`ServeSubcommand.cmd`); from v0.31 then
  `configure_logging_from_args(args)` (vllm/logger.py), as main.py calls it before validating;
- validate: `ServeSubcommand.validate` (`validate_parsed_serve_args`), then `ServeSubcommand.cmd`
  itself with its launchers (`run_server` under `uvloop.run`, `run_multi_api_server`,
  `run_headless`, `run_dp_supervisor`: serve.py's `run_*` names) replaced by stand-ins that only
  record which one it chose: its own checks (from v0.15 `--headless` with `--api-server-count`, the
  data-parallel load-balancing modes) and what it sets on the arguments (the positional model; from
  v0.15 the API-server count defaults to `--data-parallel-size`) are vLLM's, per release;
- api-server: `setup_server(args)`: the tool and reasoning parser plugins it imports, then
  `validate_api_server_args`, then the listening socket (closed at once; one the preflight's own
  network cannot bind is not the server's problem, so it is noted, not refused); a headless node
  (`--headless`, `--api-server-count 0`) runs no API server;
- config: `AsyncEngineArgs.from_cli_args(args).create_engine_config(usage_context=OPENAI_API_SERVER)`
  (`headless=True` for a headless node; with several API servers `_api_process_count` set first, as
  `run_multi_api_server` does from v0.11): reads the weights' config.json (and a remote-code config,
  a speculative draft's config.json, from the Hub where the argv names one) and detects the platform
  through NVML; it loads no weights, no tokenizer, starts no worker and no Ray and initialises no
  CUDA context (read against v0.34 on a faked NVML);
- attention: `get_attn_backend(...)` under `set_current_vllm_config(config)`, asked for the model's
  attention layers as an `Attention` layer asks when the model is built.

Not run, because they start the server: anything after the engine config (the tokenizer, the chat
template, the weights), and a launcher's own checks (`run_headless`'s, `run_multi_api_server`'s).

Entry points are looked up where the project's registry recorded them for the release (the
generator follows vLLM's own imports: tools/vllm_release/entry_points.py), then in CANDIDATES, so a
release the project has no registry for is checked too; a step whose entry point is nowhere is
reported as not run, never guessed. What an exception means - vLLM's refusal, a broken image, the
check's own error - is `outcomes.outcome`'s call.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import inspect
import io
import json
import os
from collections.abc import Callable
from typing import Any

from .launcher import headless, launch
from .outcomes import MESSAGE_CHARS, Broken, NotRun, Refused, outcome, words

CANDIDATES: dict[str, tuple[str, ...]] = {
    "cli_setup": ("vllm.entrypoints.common.startup:cli_env_setup",
                  "vllm.entrypoints.serve.utils.api_utils:cli_env_setup", "vllm.entrypoints.utils:cli_env_setup"),
    "argument_parser": ("vllm.utils.argparse_utils:FlexibleArgumentParser", "vllm.utils:FlexibleArgumentParser"),
    "serve_subcommand": ("vllm.entrypoints.cli.serve:ServeSubcommand",),
    "serve_validation": ("vllm.entrypoints.common.cli_args:validate_parsed_serve_args",
                         "vllm.entrypoints.launchers.cli_args:validate_parsed_serve_args",
                         "vllm.entrypoints.openai.cli_args:validate_parsed_serve_args"),
    "server_setup": ("vllm.entrypoints.launchers.launcher:setup_server",
                     "vllm.entrypoints.openai.api_server:setup_server"),
    "api_server_validation": ("vllm.entrypoints.common.cli_args:validate_api_server_args",
                              "vllm.entrypoints.launchers.launcher:validate_api_server_args",
                              "vllm.entrypoints.openai.api_server:validate_api_server_args"),
    "engine_args": ("vllm.engine.arg_utils:AsyncEngineArgs",),
    "usage_context": ("vllm.usage.usage_lib:UsageContext",),
    "config_context": ("vllm.config.vllm:set_current_vllm_config", "vllm.config:set_current_vllm_config"),
    "attention_selector": ("vllm.v1.attention.selector:get_attn_backend", "vllm.attention.selector:get_attn_backend"),
    # v0.31+ cli/main.py calls it between parsing and validating (the registries record it from v0.31)
    "logging_setup": ("vllm.logger:configure_logging_from_args",),
}


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
            raise Broken(f"{module_name} fails to import: {words(exc)}") from exc
        except Exception as exc:  # vLLM's own module failed to import: the server would fail the same way
            raise Broken(f"{module_name} fails to import: {words(exc)}") from exc
        found = getattr(module, attr, None)
        if found is not None:
            return found, spec
    raise NotRun(f"no {name.replace('_', ' ')} in this release (looked for {', '.join(tried)})")


State = dict[str, Any]


def parse(state: State) -> str:
    try:
        setup, setup_at = resolve("cli_setup", state["recorded"])
    except NotRun:
        setup_at = "no cli_env_setup"
    else:
        setup()
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
    try:
        configure_logging, logging_at = resolve("logging_setup", state["recorded"])
    except NotRun:
        return f"{parser_at} with {serve_at} after {setup_at}"
    configure_logging(args)
    return f"{parser_at} with {serve_at} after {setup_at}, then {logging_at}"


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
    return f"{at}, {launch(state)}"


def api_server(state: State) -> str:
    args = parsed(state)
    if headless(state):
        raise NotRun("a headless node serves no API (`vllm serve --headless` runs no API server)")
    if state.get("launcher", "run_server") not in ("run_server", "run_multi_api_server"):
        raise NotRun(f"`vllm serve` launches {state['launcher']}, whose API servers the check does not follow")
    try:
        setup, at = resolve("server_setup", state["recorded"])
    except NotRun:
        check, at = resolve("api_server_validation", state["recorded"])
        check(args)
        return at
    keywords = {"reuse_port": False} if "reuse_port" in inspect.signature(setup).parameters else {}
    try:
        _, sock = setup(args, **keywords)
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise
        # setup_server validates before it binds: only the socket is left, in the preflight's own network
        return f"{at} (its socket not bound here: {words(exc)})"
    sock.close()
    return at


def config(state: State) -> str:
    args = parsed(state)
    engine_args_class, at = resolve("engine_args", state["recorded"])
    usage_context, _ = resolve("usage_context", state["recorded"])
    engine_args = engine_args_class.from_cli_args(args)
    if state.get("launcher") == "run_multi_api_server" and hasattr(engine_args, "_api_process_count"):
        # serve.py run_multi_api_server (v0.11+): the config knows how many API servers share the engine
        engine_args._api_process_count = args.api_server_count
        engine_args._api_process_rank = -1
    create = engine_args.create_engine_config
    accepted = inspect.signature(create).parameters
    kwargs: dict[str, Any] = {"usage_context": usage_context.OPENAI_API_SERVER} if "usage_context" in accepted else {}
    if headless(state) and "headless" in accepted:
        kwargs["headless"] = True  # serve.py run_headless: a node that serves no API
    state["config"] = create(**kwargs)
    state["facts"] = facts(state["config"])
    return f"{at}.create_engine_config"


def facts(vllm_config: Any) -> dict[str, Any]:
    """What the memory check and the report need from the engine config; what this release's
    config does not have is left out (the memory check then reads the flag or the default)."""
    cache, model = getattr(vllm_config, "cache_config", None), getattr(vllm_config, "model_config", None)
    # v0.34 (config/cache.py): None until resolved, 1.0 with the extensible KV cache, else its default
    utilization = getattr(cache, "resolved_gpu_memory_utilization", None) or getattr(
        cache, "gpu_memory_utilization", None)
    if not isinstance(utilization, (int, float)):
        return {}
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
    try:
        with context(vllm_config):
            backend = select(**arguments)
    except Exception as exc:
        status, _ = outcome(exc, os.path.dirname(attention.__code__.co_filename))
        if status != "refused":
            raise
        # the arguments are the check's reading of the model's layers: show them beside vLLM's words
        asked = ", ".join(f"{k}={v}" for k, v in arguments.items() if k in ASKED)
        raise Refused(f"{words(exc)} (asked for the model's attention layers: {asked})") from exc
    name = backend.get_name() if hasattr(backend, "get_name") else getattr(backend, "__name__", str(backend))
    state["facts"]["attention_backend"] = name
    return at


ASKED = ("head_size", "dtype", "kv_cache_dtype", "use_mla")
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
    own = os.path.dirname(run.__code__.co_filename)
    for name, step in STEPS:
        try:
            status, detail = "ok", step(state)
        except (Exception, SystemExit) as exc:
            status, detail = outcome(exc, own)
        result["steps"].append({"name": name, "status": status, "detail": detail[:MESSAGE_CHARS]})
        if status in ("refused", "broken"):
            break
    result["facts"] = state["facts"]
    return result


def child_main(fd: int, argv: list[str], recorded: dict[str, str]) -> int:
    """Run the steps and write the result to `fd` (a crash leaves it empty: the parent says so)."""
    try:
        result = run(argv, recorded)
    except BaseException as exc:  # noqa: BLE001 - the check's own bug must reach the parent as one
        result = {"version": None, "facts": {}, "steps": [
            {"name": "check", "status": "error", "detail": f"the check's own error, not vLLM's: {words(exc)}"}]}
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(result, out, default=str)
    return 0
