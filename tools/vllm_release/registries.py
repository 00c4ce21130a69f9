"""Name registries of a release: tool-call and reasoning parsers, quantization methods, attention
backends. Each name is recorded with the file (inside the wheel) it was read from."""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.source_tree import SourceTree, Symbol, class_body_value, class_method, literal_str
from tools.vllm_release.type_hints import HintReader, KwargsRules

# (manager class, packages holding its registrations), newest layout first
PARSER_REGISTRIES = {
    "tool_parsers": ("ToolParserManager", ["vllm/tool_parsers/", "vllm/entrypoints/openai/tool_parsers/"]),
    "reasoning_parsers": ("ReasoningParserManager", ["vllm/reasoning/"]),
}
QUANTIZATION_INIT = "vllm/model_executor/layers/quantization/__init__.py"
# (file, enum class) of the attention backend registry, newest layout first
ATTENTION_REGISTRIES = [
    ("vllm/v1/attention/backends/registry.py", "AttentionBackendEnum"),
    ("vllm/attention/backends/registry.py", "AttentionBackendEnum"),
    ("vllm/attention/backends/registry.py", "_Backend"),
    ("vllm/platforms/interface.py", "_Backend"),
]


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


def extract_quantization(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    if not tree.has(QUANTIZATION_INIT):
        problems.append("quantization: package not found")
        return {"source": None, "methods": {}}
    reader = HintReader(tree, KwargsRules())
    alias = tree.resolve(QUANTIZATION_INIT, "QuantizationMethods")
    names: list[str] = []
    if alias is not None and isinstance(alias.node, ast.expr):
        for hint in reader.hints(alias.path, alias.node):
            names += [str(v) for v in hint.values]
    deprecated = _string_list(tree, QUANTIZATION_INIT, "DEPRECATED_QUANTIZATION_METHODS")
    classes = _method_classes(tree)
    methods: dict[str, Any] = {}
    for name in names:
        cls = classes.get(name)
        min_cc, source = (None, None)
        if cls is not None and isinstance(cls.node, ast.ClassDef):
            min_cc, source = _min_capability(tree, cls)
        if min_cc is None:
            problems.append(f"quantization: {name} minimum capability not statically readable")
        methods[name] = {
            "min_capability": min_cc,
            "deprecated": name in deprecated,
            "config_class": cls.name if cls else None,
            "source": source or (cls.path if cls else None),
        }
    if not methods:
        problems.append("quantization: QuantizationMethods not found")
    return {"source": QUANTIZATION_INIT, "methods": methods}


def _string_list(tree: SourceTree, path: str, name: str) -> set[str]:
    found = tree.resolve(path, name)
    if found is not None and isinstance(found.node, ast.List | ast.Tuple | ast.Set):
        return {s for s in map(literal_str, found.node.elts) if s}
    return set()


def _method_classes(tree: SourceTree) -> dict[str, Symbol]:
    """`method_to_config` in `get_quantization_config`: method name -> config class."""
    func = tree.resolve(QUANTIZATION_INIT, "get_quantization_config")
    if func is None or not isinstance(func.node, ast.FunctionDef):
        return {}
    local_imports = {a.asname or a.name: (stmt, a.name) for stmt in ast.walk(func.node)
                     if isinstance(stmt, ast.ImportFrom) for a in stmt.names}
    table = next((n.value for n in ast.walk(func.node) if isinstance(n, ast.AnnAssign | ast.Assign)
                  and isinstance(n.value, ast.Dict)), None)
    classes: dict[str, Symbol] = {}
    if not isinstance(table, ast.Dict):
        return classes
    for key, value in zip(table.keys, table.values, strict=True):
        name = literal_str(key)
        if name is None or not isinstance(value, ast.Name):
            continue
        if value.id in local_imports:
            stmt, original = local_imports[value.id]
            found = tree.resolve_import(func.path, stmt, original)
        else:
            found = tree.resolve(func.path, value.id)
        if found is not None and found.kind == "class":
            classes[name] = found
    return classes


def _min_capability(tree: SourceTree, cls: Symbol) -> tuple[int | None, str | None]:
    assert isinstance(cls.node, ast.ClassDef)
    for owner in tree.mro(cls.path, cls.node):
        assert isinstance(owner.node, ast.ClassDef)
        method = class_method(owner.node, "get_min_capability")
        if method is None:
            continue
        returns = [n for n in ast.walk(method) if isinstance(n, ast.Return)]
        if len(returns) == 1 and isinstance(returns[0].value, ast.Constant):
            value = returns[0].value.value
            if isinstance(value, int) and not isinstance(value, bool):
                return value, owner.path
        return None, owner.path
    return None, None


def extract_attention_backends(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    for path, enum_name in ATTENTION_REGISTRIES:
        found = tree.resolve(path, enum_name) if tree.has(path) else None
        if found is not None and isinstance(found.node, ast.ClassDef):
            return {"source": found.path, "backends": _backends(tree, found.node, problems)}
    problems.append("attention_backends: registry enum not found")
    return {"source": None, "backends": {}}


def _backends(tree: SourceTree, enum: ast.ClassDef, problems: list[str]) -> dict[str, Any]:
    backends: dict[str, Any] = {}
    for stmt in enum.body:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)):
            continue
        name = stmt.targets[0].id
        class_path = literal_str(stmt.value) or ""  # "" / None / enum.auto(): no class path
        record: dict[str, Any] = {"class": class_path or None, "compute_capability": None,
                                  "kv_cache_dtypes": None, "kv_cache_dtypes_runtime": False,
                                  "source": None}
        backend = _class_by_qualname(tree, class_path) if class_path else None
        if backend is not None and isinstance(backend.node, ast.ClassDef):
            record.update(_backend_facts(tree, backend))
        elif class_path:
            problems.append(f"attention_backends: {name} class {class_path} not in the tree")
        backends[name] = record
    return backends


def _class_by_qualname(tree: SourceTree, qualname: str) -> Symbol | None:
    module, _, name = qualname.rpartition(".")
    path = tree.module_path(module)
    found = tree.resolve(path, name) if path else None
    return found if found is not None and found.kind == "class" else None


def _backend_facts(tree: SourceTree, backend: Symbol) -> dict[str, Any]:
    assert isinstance(backend.node, ast.ClassDef)
    facts: dict[str, Any] = {"source": backend.path}
    cc_done = dtypes_done = False
    mro = tree.mro(backend.path, backend.node)
    checkers = [o for o in mro if isinstance(o.node, ast.ClassDef)
                and class_method(o.node, "supports_kv_cache_dtype") is not None]
    # an override of the base's list lookup (FLASH_ATTN: fp8 when the FA build supports it)
    facts["kv_cache_dtypes_runtime"] = len(checkers) > 1
    for owner in mro:
        assert isinstance(owner.node, ast.ClassDef)
        method = class_method(owner.node, "supports_compute_capability")
        if method is not None and not cc_done:
            facts["compute_capability"] = _capability_range(method)
            cc_done = True
        dtypes = class_body_value(owner.node, "supported_kv_cache_dtypes")
        if dtypes is not None and not dtypes_done:
            if isinstance(dtypes, ast.List | ast.Tuple):
                facts["kv_cache_dtypes"] = [s for s in map(literal_str, dtypes.elts) if s is not None]
            dtypes_done = True
    return facts


def _capability_range(method: ast.FunctionDef) -> dict[str, Any] | None:
    """`supports_compute_capability`'s return expression as {min, max, majors}, when it is one
    of the simple forms vLLM writes (comparisons with DeviceCapability(m, n), `.major == n`)."""
    body = [s for s in method.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    result: dict[str, Any] = {"min": None, "max": None, "majors": None}
    terms = body[0].value.values if isinstance(body[0].value, ast.BoolOp) and isinstance(
        body[0].value.op, ast.And) else [body[0].value]
    for term in terms:
        if isinstance(term, ast.Constant) and term.value is True:
            continue
        if not (isinstance(term, ast.Compare) and len(term.ops) == 1):
            return None
        op, right = term.ops[0], term.comparators[0]
        if isinstance(term.left, ast.Attribute) and term.left.attr == "major":
            values = right.elts if isinstance(right, ast.List | ast.Tuple | ast.Set) else [right]
            majors = [v.value for v in values if isinstance(v, ast.Constant)]
            if not isinstance(op, ast.Eq | ast.In) or len(majors) != len(values):
                return None
            result["majors"] = majors
            continue
        version = _device_capability(right)
        if version is None:
            return None
        if isinstance(op, ast.GtE):
            result["min"] = version
        elif isinstance(op, ast.LtE):
            result["max"] = version
        elif isinstance(op, ast.Lt):
            result["max"] = [version[0], version[1] - 1] if version[1] else [version[0] - 1, 9]
        else:
            return None
    return result


def _device_capability(node: ast.expr) -> list[int] | None:
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("DeviceCapability"):
        values = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
        if len(values) == 2 == len(node.args):
            return [int(v) for v in values]
    return None
