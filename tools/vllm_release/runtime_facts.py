"""Prometheus metrics of a release."""

from __future__ import annotations

import ast
import re
from typing import Any

from tools.vllm_release.source_tree import SourceTree, literal_str

METRIC_TYPES = ("histogram", "counter", "gauge")  # matched in the constructor's name
# vllm/engine/ holds the V0 engine's metrics (gone since 0.11); the served V1 engine never exports them
METRIC_SKIP = ("vllm/third_party/", "vllm/benchmarks/", "vllm/engine/")
METRIC_NAME = re.compile(r"vllm:[a-z_][a-z0-9_]*")


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
    """Names bound to string constants in a function: assigned (`name = "vllm:..."`), or unpacked
    by a loop over a table of tuples (`for name, doc in counter_specs`, spec decode's counters)."""
    found: dict[str, list[str]] = {}
    tables: dict[str, list[ast.expr]] = {}
    for node in ast.walk(func):
        if not isinstance(node, ast.Assign):
            continue
        for target in (t for t in node.targets if isinstance(t, ast.Name)):
            if (s := literal_str(node.value)) is not None:
                found.setdefault(target.id, []).append(s)
            elif isinstance(node.value, ast.List | ast.Tuple):
                tables.setdefault(target.id, []).extend(node.value.elts)
    for node in ast.walk(func):
        if not (isinstance(node, ast.For | ast.comprehension) and isinstance(node.target, ast.Tuple)
                and isinstance(node.iter, ast.Name) and node.iter.id in tables):
            continue
        for row in (r for r in tables[node.iter.id] if isinstance(r, ast.Tuple)):
            for target, cell in zip(node.target.elts, row.elts, strict=False):
                if isinstance(target, ast.Name) and (s := literal_str(cell)) is not None:
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
