"""Speculative-decoding methods, environment variables and Prometheus metrics of a release."""

from __future__ import annotations

import ast
import re
from typing import Any

from tools.vllm_release.source_tree import SourceTree, literal_str
from tools.vllm_release.type_hints import HintReader, KwargsRules

SPECULATIVE_FILES = ["vllm/config/speculative.py", "vllm/config/__init__.py"]
ENVS = "vllm/envs.py"
METRIC_TYPES = ("histogram", "counter", "gauge")  # matched in the constructor's name
# vllm/engine/ holds the V0 engine's metrics (gone since 0.11); the served V1 engine never exports them
METRIC_SKIP = ("vllm/third_party/", "vllm/benchmarks/", "vllm/engine/")
METRIC_NAME = re.compile(r"vllm:[a-z_][a-z0-9_]*")


# -- speculative decoding -------------------------------------------------------------------------

def extract_speculative(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    for path in SPECULATIVE_FILES:
        found = tree.resolve(path, "SpeculativeConfig") if tree.has(path) else None
        if found is not None and isinstance(found.node, ast.ClassDef):
            return _speculative(tree, found.path, found.node, problems)
    problems.append("speculative: SpeculativeConfig not found")
    return {"source": None, "methods": {}}


def _speculative(tree: SourceTree, path: str, cls: ast.ClassDef, problems: list[str]) -> dict[str, Any]:
    reader = HintReader(tree, KwargsRules())
    method_field = next((f for f in reader.fields(path, cls) if f.name == "method"), None)
    methods: list[str] = []
    if method_field is not None:
        for hint in reader.hints(method_field.path, method_field.annotation):
            methods += [str(v) for v in hint.values]
    aliases: dict[str, str] = {}
    draft_free: dict[str, str] = {}
    chain_found = target_dependent = False
    for node in ast.walk(cls):
        if not isinstance(node, ast.If):
            continue
        target = _assigned_const(node.body, "method")
        if target is not None:
            for tested in _tested_methods(tree, reader, path, node.test):
                if tested != target and tested in methods:
                    aliases.setdefault(tested, target)
        if _mentions_model_is_none(node.test):
            for branch_test, body in _if_chain(node.body):
                model = _assigned(body, "model")
                if branch_test is None or model is None:
                    continue
                chain_found = True
                draft = "target_model" if isinstance(model, ast.Attribute) else "none"
                tested_methods = _tested_methods(tree, reader, path, branch_test)
                # a branch keyed on the target model (v0.10: MTP for deepseek_v3...) leaves
                # the other methods' need for a draft model to the checkpoint
                target_dependent = target_dependent or not tested_methods
                for tested in tested_methods:
                    draft_free.setdefault(tested, draft)
    if not chain_found:
        problems.append("speculative: which methods need a draft model is not statically readable")
    elif target_dependent:
        problems.append("speculative: whether a method needs a draft model depends on the target "
                        "model type for methods without their own branch")
    records: dict[str, Any] = {}
    for method in methods:
        canonical = aliases.get(method, method)
        known = chain_found and (canonical in draft_free or not target_dependent)
        records[method] = {
            "alias_of": aliases.get(method),
            "needs_draft_model": (canonical not in draft_free) if known else None,
            "draft": draft_free.get(canonical) if known else None,
        }
    if not methods:
        problems.append("speculative: method Literal not readable")
    return {"source": path, "methods": records}


def _is_self_attr(node: ast.expr, attr: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == attr
            and isinstance(node.value, ast.Name) and node.value.id == "self")


def _assigned(body: list[ast.stmt], attr: str) -> ast.expr | None:
    for stmt in body:
        if isinstance(stmt, ast.Assign) and any(_is_self_attr(t, attr) for t in stmt.targets):
            return stmt.value
    return None


def _assigned_const(body: list[ast.stmt], attr: str) -> str | None:
    return literal_str(_assigned(body, attr))


def _tested_methods(tree: SourceTree, reader: HintReader, path: str, test: ast.expr) -> list[str]:
    """Method names a test compares `self.method` with (`==`, `in (...)`, `in get_args(Alias)`)."""
    names: list[str] = []
    for node in ast.walk(test):
        if not (isinstance(node, ast.Compare) and _is_self_attr(node.left, "method")):
            continue
        op, right = node.ops[0], node.comparators[0]
        if isinstance(op, ast.Eq) and (s := literal_str(right)) is not None:
            names.append(s)
        elif isinstance(op, ast.In) and isinstance(right, ast.Tuple | ast.List | ast.Set):
            names += [s for s in map(literal_str, right.elts) if s is not None]
        elif isinstance(op, ast.In) and isinstance(right, ast.Name):  # a module-level tuple
            found = tree.resolve(path, right.id)
            if found is not None and isinstance(found.node, ast.Tuple | ast.List):
                names += [s for s in map(literal_str, found.node.elts) if s is not None]
        elif isinstance(op, ast.In) and isinstance(right, ast.Call) and right.args:
            for hint in reader.hints(path, right.args[0]):
                names += [str(v) for v in hint.values]
    return names


def _mentions_model_is_none(test: ast.expr) -> bool:
    return any(isinstance(n, ast.Compare) and _is_self_attr(n.left, "model")
               and isinstance(n.ops[0], ast.Is) for n in ast.walk(test))


def _if_chain(body: list[ast.stmt]) -> list[tuple[ast.expr | None, list[ast.stmt]]]:
    """The branches of the first if/elif/else chain in `body`: (test or None for else, body)."""
    first = next((s for s in body if isinstance(s, ast.If)), None)
    branches: list[tuple[ast.expr | None, list[ast.stmt]]] = []
    while first is not None:
        branches.append((first.test, first.body))
        if len(first.orelse) == 1 and isinstance(first.orelse[0], ast.If):
            first = first.orelse[0]
        else:
            if first.orelse:
                branches.append((None, first.orelse))
            first = None
    return branches


# -- environment variables ------------------------------------------------------------------------

def extract_env_vars(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    if not tree.has(ENVS):
        problems.append("env_vars: vllm/envs.py not found")
        return {"source": None, "names": [], "removed": []}
    tables: dict[str, list[str]] = {}
    for stmt in tree.parse(ENVS).body:
        if isinstance(stmt, ast.AnnAssign | ast.Assign) and isinstance(stmt.value, ast.Dict):
            target = stmt.target if isinstance(stmt, ast.AnnAssign) else stmt.targets[0]
            if isinstance(target, ast.Name):
                tables[target.id] = sorted(s for s in map(literal_str, stmt.value.keys) if s)
    if "environment_variables" not in tables:
        problems.append("env_vars: environment_variables table not found")
    return {"source": ENVS, "names": tables.get("environment_variables", []),
            "removed": tables.get("removed_environment_variables", [])}


# -- Prometheus metrics ---------------------------------------------------------------------------

def extract_metrics(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    """`vllm:*` metrics created anywhere in the package (v1/metrics, spec decode, kv offload...)."""
    metrics: dict[str, Any] = {}
    mentioned: dict[str, str] = {}
    for path in tree.paths_under("vllm/"):
        if path.startswith(METRIC_SKIP) or not tree.contains(path, "vllm:"):
            continue
        module = tree.parse(path)
        _scan(module, path, False, _module_constants(module), metrics, problems)
        for node in ast.walk(module):
            if (s := literal_str(node)) is not None and METRIC_NAME.fullmatch(s):
                mentioned.setdefault(s, path)
    # names that only appear as constants (tables, enums) a constructor reads indirectly: the
    # name is exported but its type is not statically tied to it
    for name, path in mentioned.items():
        if name not in metrics and not _is_series_of(name, metrics):
            metrics[name] = {"type": None, "hidden": False, "source": path}
            problems.append(f"metrics: {name} type not statically readable ({path})")
    if not metrics:
        problems.append("metrics: no vllm:* metric constructor found")
    return dict(sorted(metrics.items()))


def _is_series_of(name: str, metrics: dict[str, Any]) -> bool:
    """`vllm:x_total` / `_bucket` ... of a known metric (a PromQL mention, not a new metric)."""
    return any(name == base + suffix for base in metrics
               for suffix in ("_total", "_bucket", "_sum", "_count", "_created"))


def _module_constants(module: ast.Module) -> dict[str, list[str]]:
    """String constants bound at module level or in a class body (`X = "vllm:..."`), by the
    name (`X`) and by the dotted class attribute (`Cls.X`)."""
    found: dict[str, list[str]] = {}
    for stmt in module.body:
        scopes: list[tuple[str, list[ast.stmt]]] = [("", [stmt])]
        if isinstance(stmt, ast.ClassDef):
            scopes = [(stmt.name + ".", stmt.body)]
        for prefix, body in scopes:
            for inner in body:
                targets = inner.targets if isinstance(inner, ast.Assign) else (
                    [inner.target] if isinstance(inner, ast.AnnAssign) else [])
                value = literal_str(getattr(inner, "value", None))
                for target in targets:
                    if isinstance(target, ast.Name) and value is not None:
                        found.setdefault(prefix + target.id, []).append(value)
    return found


def _scan(node: ast.AST, path: str, hidden: bool, names: dict[str, list[str]],
          metrics: dict[str, Any], problems: list[str]) -> None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        names = {**names, **_string_assignments(node)}
    if isinstance(node, ast.Call):
        _record_metric(node, path, hidden, names, metrics, problems)
    for child in ast.iter_child_nodes(node):
        child_hidden = hidden or (
            isinstance(node, ast.If) and child in node.body
            and "show_hidden_metrics" in ast.unparse(node.test))
        _scan(child, path, child_hidden, names, metrics, problems)


def _string_assignments(func: ast.AST) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and (s := literal_str(node.value)) is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(s)
    return found


def _record_metric(call: ast.Call, path: str, hidden: bool, names: dict[str, list[str]],
                   metrics: dict[str, Any], problems: list[str]) -> None:
    callee = ast.unparse(call.func).lower()
    kind = next((k for k in METRIC_TYPES if k in callee), None)
    if kind is None:
        return
    arg = next((k.value for k in call.keywords if k.arg == "name"), call.args[0] if call.args else None)
    if isinstance(arg, ast.Name | ast.Attribute):
        values = [v for v in names.get(ast.unparse(arg), []) if v.startswith("vllm:")]
    else:
        values = [v] if (v := literal_str(arg)) is not None and v.startswith("vllm:") else []
    if isinstance(arg, ast.JoinedStr) and "vllm:" in ast.unparse(arg):
        problems.append(f"metrics: a {kind} name built at run time in {path}:{call.lineno}")
    for name in values:
        previous = metrics.get(name)
        metrics[name] = {
            "type": kind,
            # shown only with --show-hidden-metrics-for-version when every creation is gated
            "hidden": hidden and (previous is None or previous["hidden"]),
            "source": previous["source"] if previous else path,
        }
