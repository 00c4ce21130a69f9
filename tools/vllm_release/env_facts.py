"""Environment variables of a release, and how it validates their values.

`envs.py` `environment_variables` maps each name to the lambda that reads it. vLLM evaluates every
one of them when the engine core starts (`enable_envs_cache`, `v1/engine/core.py`), so a value the
lambda cannot parse (`int("yes")`) or a choice outside `env_with_choices`'s list stops the server.
One variable is checked against the model itself: `VLLM_PP_LAYER_PARTITION`, whose layer counts
`distributed/utils.py` `get_pp_indices` compares with the pipeline stages and the model's layers.
"""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.source_tree import SourceTree, literal_str

ENVS = "vllm/envs.py"
CHOICE_HELPERS = {"env_with_choices": "one", "env_list_with_choices": "list", "env_set_with_choices": "list"}
# builtins a lambda wraps its getenv in, outermost first: the value must parse as the last one
PARSERS = ("int", "float")
MODEL_CHECKS = ("vllm/distributed/utils.py",)
MODEL_NAMES = frozenset({"num_hidden_layers", "pp_size"})  # what a check compares a variable with


def _names(node: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def extract_env_vars(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    if not tree.has(ENVS):
        problems.append("env_vars: vllm/envs.py not found")
        return {"source": None, "names": [], "removed": [], "values": {}, "model_checks": {}}
    tables: dict[str, ast.Dict] = {}
    for stmt in tree.parse(ENVS).body:
        if isinstance(stmt, ast.AnnAssign | ast.Assign) and isinstance(stmt.value, ast.Dict):
            target = stmt.target if isinstance(stmt, ast.AnnAssign) else stmt.targets[0]
            if isinstance(target, ast.Name):
                tables[target.id] = stmt.value
    if "environment_variables" not in tables:
        problems.append("env_vars: environment_variables table not found")
    readers = tables.get("environment_variables")
    values: dict[str, Any] = {}
    if readers is not None:
        for key, reader in zip(readers.keys, readers.values, strict=True):
            name = literal_str(key)
            check = _value_check(tree, reader) if name else None
            if name and check is not None:
                values[name] = check
    return {"source": ENVS, "names": _keys(readers), "removed": _keys(tables.get("removed_environment_variables")),
            "values": dict(sorted(values.items())), "model_checks": _model_checks(tree, problems)}


def _keys(table: ast.Dict | None) -> list[str]:
    return sorted(s for s in map(literal_str, table.keys) if s) if table is not None else []


def _value_check(tree: SourceTree, reader: ast.expr) -> dict[str, Any] | None:
    """What the reader demands of a set value: one of `choices` (a comma list for the list
    helpers), or a number `int(...)`/`float(...)` can parse."""
    if isinstance(reader, ast.Call) and isinstance(reader.func, ast.Name) and reader.func.id in CHOICE_HELPERS:
        choices = reader.args[2] if len(reader.args) > 2 else next(
            (k.value for k in reader.keywords if k.arg == "choices"), None)
        listed = _strings(tree, choices)
        if listed is None:
            return None  # choices computed at run time (a registry): not statically known
        case = next((k.value for k in reader.keywords if k.arg == "case_sensitive"), None)
        if case is None and len(reader.args) > 3:
            case = reader.args[3]
        return {"choices": listed, "case_sensitive": not (isinstance(case, ast.Constant) and case.value is False),
                "list": CHOICE_HELPERS[reader.func.id] == "list"}
    if isinstance(reader, ast.Lambda):
        parsed = _parser(reader.body)
        if parsed is not None:
            return {"type": parsed}
    return None


def _parser(body: ast.expr) -> str | None:
    """`int(os.getenv(...))`, `bool(int(os.getenv(...)))`: the innermost numeric parse of a getenv."""
    node: ast.expr = body
    found = None
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        if node.func.id in PARSERS:
            found = node.func.id
        node = node.args[0]
    is_getenv = isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.getenv", "os.environ.get")
    return found if is_getenv else None


def _strings(tree: SourceTree, node: ast.expr | None) -> list[str] | None:
    if isinstance(node, ast.List | ast.Tuple) and all(literal_str(e) is not None for e in node.elts):
        return [str(literal_str(e)) for e in node.elts]
    if isinstance(node, ast.Name):
        found = tree.resolve(ENVS, node.id)
        if found is not None and isinstance(found.node, ast.expr):
            return _strings(tree, found.node)
    return None


def _model_checks(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    """Variables a function compares with the model's layers: `envs.X` read in a function that
    raises when a `sum(...)` differs from `num_hidden_layers` (the layer partition)."""
    found: dict[str, Any] = {}
    for path in MODEL_CHECKS:
        if not tree.has(path):
            continue
        for func in ast.walk(tree.parse(path)):
            if not isinstance(func, ast.FunctionDef):
                continue
            names = {n.attr for n in ast.walk(func) if isinstance(n, ast.Attribute)
                     and isinstance(n.value, ast.Name) and n.value.id == "envs"}
            checks = [ast.unparse(n.test) for n in ast.walk(func) if isinstance(n, ast.If)
                      and any(isinstance(s, ast.Raise) for s in n.body) and MODEL_NAMES & _names(n.test)]
            for name in names:
                if checks:
                    found[name] = {"checks": checks, "source": f"{path} {func.name}"}
    if "VLLM_PP_LAYER_PARTITION" not in found:
        problems.append("env_vars: the layer-partition check (VLLM_PP_LAYER_PARTITION) not found")
    return found
