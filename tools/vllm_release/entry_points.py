"""Where a release's vLLM has the entry points the preflight's `engine` check calls, and how its
worker tests free memory at start: the `preflight_entry_points` section.

Found by following vLLM's own imports from `vllm serve` (entrypoints/cli/serve.py), never by
name guessing: the parser class and serve validation it imports, the API server module its
`setup_server`/`run_server` come from (`validate_api_server_args`, and `AsyncEngineArgs` where
`build_async_engine_client` builds it), the `Attention` layer a model (models/llama.py) uses and the
`get_attn_backend` that layer imports, the `cli_env_setup` cli/main.py runs before it
parses and (v0.31+) the `configure_logging_from_args` it runs before it validates. Each call is
written `module:attribute`, as the in-image program imports it
(vllm_serving/preflight/in_image/vllm_calls.py); what cannot be followed is left null and listed
in `unextracted`; a call the release does not make (logging before v0.31) is left out.
"""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.source_tree import SourceTree, Symbol, class_body_value

SERVE = "vllm/entrypoints/cli/serve.py"
CLI_MAIN = "vllm/entrypoints/cli/main.py"
CONFIG = "vllm/config/__init__.py"
A_MODEL = "vllm/model_executor/models/llama.py"  # every release has it; its Attention is the layer's
WORKER = "vllm/v1/worker/"
MEMORY_REFUSAL = "is less than desired GPU memory utilization"
LOGGING_SETUP = "configure_logging_from_args"  # v0.31+: cli/main.py calls it between parsing and validating


def _resolve(tree: SourceTree, path: str | None, name: str) -> Symbol | None:
    """`name` as `path` sees it; None where the file is not in this release."""
    return tree.resolve(path, name) if path is not None and tree.has(path) else None


def _at(tree: SourceTree, symbol: Symbol | None) -> str | None:
    if symbol is None or symbol.kind not in ("class", "function"):
        return None
    assert isinstance(symbol.node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    return f"{tree.dotted(symbol.path)}:{symbol.node.name}"


def _module_of(tree: SourceTree, path: str | None, names: tuple[str, ...]) -> str | None:
    """The file defining the first of `names` that `path` can resolve."""
    for name in names:
        found = _resolve(tree, path, name)
        if found is not None and found.kind in ("class", "function"):
            return found.path
    return None


def _parameters(function: ast.AST | None) -> dict[str, str] | None:
    """Parameter name -> `required` or `optional` (has a default)."""
    if not isinstance(function, ast.FunctionDef):
        return None
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaulted = {a.arg for a in positional[len(positional) - len(arguments.defaults):]} | {
        a.arg for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is not None}
    return {a.arg: "optional" if a.arg in defaulted else "required"
            for a in (*positional, *arguments.kwonlyargs) if a.arg not in ("self", "cls")}


def _method(tree: SourceTree, cls: Symbol | None, name: str) -> ast.FunctionDef | None:
    if cls is None or not isinstance(cls.node, ast.ClassDef):
        return None
    for ancestor in tree.mro(cls.path, cls.node):
        assert isinstance(ancestor.node, ast.ClassDef)
        for stmt in ancestor.node.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
                return stmt
    return None


def _imported_in_function(tree: SourceTree, path: str, function: str, name: str) -> Symbol | None:
    """`name` as a `from ... import` inside `function` of `path` binds it (cli/main.py imports
    lazily, in `main`)."""
    if not tree.has(path):
        return None
    for node in tree.parse(path).body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.ImportFrom) and any(a.name == name for a in stmt.names):
                    return tree.resolve_import(path, stmt, name)
    return None


def _calls(tree: SourceTree) -> dict[str, str | None]:
    # setup_server validates the API server's arguments; run_server builds the engine client
    setup = _module_of(tree, SERVE, ("setup_server", "run_server"))
    runner = _module_of(tree, SERVE, ("run_server",))
    client = _module_of(tree, runner, ("build_async_engine_client",))
    layer = _module_of(tree, A_MODEL, ("Attention",))
    return {
        # cli/main.py runs it before it parses (VLLM_WORKER_MULTIPROC_METHOD=spawn)
        "cli_setup": _at(tree, _imported_in_function(tree, CLI_MAIN, "main", "cli_env_setup")),
        "server_setup": _at(tree, _resolve(tree, SERVE, "setup_server")),
        "argument_parser": _at(tree, _resolve(tree, SERVE, "FlexibleArgumentParser")),
        "serve_subcommand": _at(tree, _resolve(tree, SERVE, "ServeSubcommand")),
        "serve_validation": _at(tree, _resolve(tree, SERVE, "validate_parsed_serve_args")),
        "api_server_validation": _at(tree, _resolve(tree, setup, "validate_api_server_args")),
        "engine_args": _at(tree, _resolve(tree, client, "AsyncEngineArgs")),
        "usage_context": _at(tree, _resolve(tree, SERVE, "UsageContext") or _resolve(tree, client, "UsageContext")),
        "config_context": _at(tree, _resolve(tree, CONFIG, "set_current_vllm_config")),
        "attention_selector": _at(tree, _resolve(tree, layer, "get_attn_backend")),
        # v0.31+ cli/main.py: `configure_logging_from_args(args)` after parse_args, before validate
        "logging_setup": _at(tree, _resolve(tree, CLI_MAIN, LOGGING_SETUP)
                             or _imported_in_function(tree, CLI_MAIN, "main", LOGGING_SETUP)),
    }


def _absent_by_design(tree: SourceTree, name: str) -> bool:
    """A call this release's `vllm serve` does not make (no logging step before v0.31)."""
    return name == "logging_setup" and not (tree.has(CLI_MAIN) and tree.contains(CLI_MAIN, LOGGING_SETUP))


def _memory_check(tree: SourceTree) -> str | None:
    """The worker function that refuses to start on too little free memory."""
    for path in tree.paths_under(WORKER):
        if not tree.contains(path, MEMORY_REFUSAL):
            continue
        for node in ast.walk(tree.parse(path)):
            if isinstance(node, ast.ClassDef):
                for method in (m for m in node.body if isinstance(m, ast.FunctionDef)):
                    if MEMORY_REFUSAL in ast.unparse(method):
                        return f"{path}:{node.name}.{method.name}"
            elif isinstance(node, ast.FunctionDef) and node.col_offset == 0 and MEMORY_REFUSAL in ast.unparse(node):
                return f"{path}:{node.name}"
    return None


def _number(node: ast.expr | None) -> float | None:
    """A float default: `0.9`, or `Field(default=0.9, ...)`."""
    if isinstance(node, ast.Call):
        node = next((k.value for k in node.keywords if k.arg == "default"), None)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    return None


def _memory(tree: SourceTree) -> dict[str, Any]:
    cache = _resolve(tree, CONFIG, "CacheConfig")
    node = cache.node if cache is not None and isinstance(cache.node, ast.ClassDef) else None
    default = None
    if node is not None:  # v0.34: the field defaults to None and a class constant is the default
        default = _number(class_body_value(node, "gpu_memory_utilization")) or _number(
            class_body_value(node, "DEFAULT_GPU_MEMORY_UTILIZATION"))
    return {
        "check": _memory_check(tree),
        "default_gpu_memory_utilization": default,
        "extensible_kv_cache": node is not None and class_body_value(node, "enable_extensible_kv_cache") is not None,
    }


def extract_entry_points(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    """The `preflight_entry_points` section of one release."""
    calls = {name: at for name, at in _calls(tree).items() if at is not None or not _absent_by_design(tree, name)}
    section: dict[str, Any] = {"source": SERVE, "calls": calls, "memory": _memory(tree)}
    engine = _engine_args_class(tree, calls["engine_args"])
    selector = calls["attention_selector"]
    section["signatures"] = {
        "create_engine_config": _parameters(_method(tree, engine, "create_engine_config")),
        "attention_selector": _parameters(_function(tree, selector)),
    }
    problems += [f"preflight_entry_points: {name} not found" for name, at in calls.items() if at is None]
    problems += [f"preflight_entry_points: memory {name} not found"
                 for name, value in section["memory"].items() if value is None]
    return section


def _symbol(tree: SourceTree, at: str | None) -> Symbol | None:
    if at is None:
        return None
    module, _, name = at.partition(":")
    return _resolve(tree, tree.module_path(module), name)


def _engine_args_class(tree: SourceTree, at: str | None) -> Symbol | None:
    found = _symbol(tree, at)
    return found if found is not None and found.kind == "class" else None


def _function(tree: SourceTree, at: str | None) -> ast.AST | None:
    found = _symbol(tree, at)
    return found.node if found is not None and found.kind == "function" else None
