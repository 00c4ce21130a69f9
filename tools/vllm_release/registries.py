"""Name registries of a release: tool-call and reasoning parsers. Each name is recorded with the
file (inside the wheel) it was read from. (Quantization methods: quantization.py; attention
backends: attention.py.)"""

from __future__ import annotations

import ast

from tools.vllm_release.source_tree import SourceTree, literal_str

# (manager class, packages holding its registrations), newest layout first
PARSER_REGISTRIES = {
    "tool_parsers": ("ToolParserManager", ["vllm/tool_parsers/", "vllm/entrypoints/openai/tool_parsers/"]),
    "reasoning_parsers": ("ReasoningParserManager", ["vllm/reasoning/"]),
}


def extract_parsers(tree: SourceTree, kind: str, problems: list[str]) -> dict[str, str]:
    """Registered parser name -> file registering it (eager decorators and lazy tables alike)."""
    manager, packages = PARSER_REGISTRIES[kind]
    names: dict[str, str] = {}
    for package in packages:
        for path in tree.paths_under(package):
            for name in _registrations(tree.parse(path), manager):
                names.setdefault(name, path)
        if names:
            break
    if not names:
        problems.append(f"{kind}: no {manager} registration found")
    return dict(sorted(names.items()))


def _registrations(module: ast.Module, manager: str) -> list[str]:
    found: list[str] = []
    tables = {t.id: stmt.value for stmt in module.body if isinstance(stmt, ast.Assign | ast.AnnAssign)
              for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
              if isinstance(t, ast.Name) and isinstance(stmt.value, ast.Dict)}
    for node in ast.walk(module):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        if not (isinstance(owner, ast.Name) and owner.id == manager):
            continue
        if node.func.attr in ("register_module", "register_lazy_module"):
            arg = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "name"), None)
            if isinstance(arg, ast.List | ast.Tuple):
                found += [s for s in map(literal_str, arg.elts) if s]
            elif (s := literal_str(arg)) is not None:
                found.append(s)
    # lazy tables: `for name, (...) in TABLE.items(): Manager.register_lazy_module(name, ...)`
    for stmt in ast.walk(module):
        if (
            isinstance(stmt, ast.For)
            and isinstance(stmt.iter, ast.Call)
            and isinstance(stmt.iter.func, ast.Attribute)
            and isinstance(stmt.iter.func.value, ast.Name)
            and f"{manager}.register" in ast.unparse(stmt)
        ):
            table = tables.get(stmt.iter.func.value.id)
            if isinstance(table, ast.Dict):
                found += [s for s in map(literal_str, table.keys) if s]
    return found


MODEL_LOADER = "vllm/model_executor/model_loader/__init__.py"


def extract_load_formats(tree: SourceTree, problems: list[str]) -> dict[str, object] | None:
    """`--load-format` values the release has a model loader for (`_LOAD_FORMAT_TO_MODEL_LOADER`):
    the flag takes any string (a plugin may register a loader), and `get_model_loader` raises
    "Load format `...` is not supported" for any other, as the workers start."""
    found = tree.resolve(MODEL_LOADER, "_LOAD_FORMAT_TO_MODEL_LOADER") if tree.has(MODEL_LOADER) else None
    if found is None or not isinstance(found.node, ast.Dict):
        problems.append("load_formats: _LOAD_FORMAT_TO_MODEL_LOADER not found")
        return None
    names = sorted(s for s in map(literal_str, found.node.keys) if s)
    return {"names": names, "source": f"{MODEL_LOADER} get_model_loader"}
