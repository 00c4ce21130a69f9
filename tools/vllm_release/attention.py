"""Attention backends of a release: what each accepts, and the order CUDA auto-selection tries them.

For every backend of the registry enum (`v1/attention/backends/registry.py`) the release's own
`AttentionBackend.validate_configuration` (`v1/attention/backend.py`) is folded, check by check,
into expressions over its inputs (predicates.py): `head_size not supported` when
`not head_size in [64, 128, 256]`, `attention sinks not supported` when
`has_sink and not device_capability.major == 10`, ... `platforms/cuda.py`
`_get_backend_priorities` is folded the same way, and so is `fa_utils.get_flash_attn_version`
(the FlashAttention generation a GPU gets, which several checks read as `fa_version`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from tools.vllm_release.predicates import Folder, Ref, Scope, Unfoldable
from tools.vllm_release.source_tree import (
    SourceTree,
    Symbol,
    class_body_value,
    class_method,
    literal_str,
    message_template,
)

# (file, enum class) of the attention backend registry, newest layout first
ATTENTION_REGISTRIES = [
    ("vllm/v1/attention/backends/registry.py", "AttentionBackendEnum"),
    ("vllm/attention/backends/registry.py", "AttentionBackendEnum"),
    ("vllm/attention/backends/registry.py", "_Backend"),
    ("vllm/platforms/interface.py", "_Backend"),
]
CUDA_PLATFORM = ("vllm/platforms/cuda.py", ("NvmlCudaPlatform", "CudaPlatformBase"))
PRIORITIES = ("vllm/platforms/cuda.py", "_get_backend_priorities")
FA_UTILS = ("vllm/v1/attention/backends/fa_utils.py", "vllm/attention/utils/fa_utils.py")
# The names an expression may keep: validate_configuration's inputs (every release's superset),
# the priority function's, and the FlashAttention generation.
CHECK_INPUTS = frozenset({
    "head_size", "dtype", "kv_cache_dtype", "block_size", "use_mla", "has_sink", "use_sparse",
    "use_mm_prefix", "use_per_head_quant_scales", "device_capability", "attn_type", "has_sliding_window",
    "use_non_causal", "use_batch_invariant", "use_kv_connector", "use_pcp", "use_dcp", "use_rswa",
    "use_adaptive_verification", "fa_version",
})
PRIORITY_INPUTS = frozenset({"device_capability", "num_heads", "kv_cache_dtype", "use_non_causal",
                             "head_size", "use_mm_prefix"})
ENUMS = frozenset({"AttentionBackendEnum", "_Backend"})
FP8_SPELLINGS = ("fp8", "fp8_e4m3", "fp8_e5m2")
_MAPPER = re.compile(r"get_(fp8_)?dtype_for_")


def extract_attention_backends(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    for path, enum_name in ATTENTION_REGISTRIES:
        found = tree.resolve(path, enum_name) if tree.has(path) else None
        if found is not None and isinstance(found.node, ast.ClassDef):
            folder = _folder(tree, CHECK_INPUTS)
            backends = _backends(tree, folder, found.node, problems)
            return {"source": found.path, "backends": backends,
                    "selection": _selection(tree, problems),
                    "assumed": sorted(folder.assumed_used)}
    problems.append("attention_backends: registry enum not found")
    return {"source": None, "backends": {}, "selection": None, "assumed": []}


def _folder(tree: SourceTree, inputs: frozenset[str]) -> Folder:
    path, names = CUDA_PLATFORM
    platform = next((s for n in names if tree.has(path) and (s := tree.resolve(path, n)) is not None), None)
    return Folder(tree, inputs, ENUMS, platform)


def _backends(tree: SourceTree, folder: Folder, enum: ast.ClassDef, problems: list[str]) -> dict[str, Any]:
    backends: dict[str, Any] = {}
    for stmt in enum.body:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)):
            continue
        name = stmt.targets[0].id
        class_path = _class_path(stmt.value)
        record: dict[str, Any] = {"class": class_path or None, "compute_capability": None,
                                  "kv_cache_dtypes": None, "kv_cache_dtypes_runtime": False,
                                  "source": None}
        backend = _class_by_qualname(tree, class_path) if class_path else None
        if backend is not None and isinstance(backend.node, ast.ClassDef):
            record.update(_backend_facts(tree, backend))
            record.update(_folded_facts(tree, folder, name, backend, problems))
        elif class_path:
            problems.append(f"attention_backends: {name} class {class_path} not in the tree")
        backends[name] = record
    return backends


def _class_path(node: ast.expr) -> str:
    """The enum value: a string, possibly split over implicit concatenation (already joined by
    the parser) or parenthesised."""
    return literal_str(node) or ""


def _class_by_qualname(tree: SourceTree, qualname: str) -> Symbol | None:
    module, _, name = qualname.rpartition(".")
    path = tree.module_path(module)
    found = tree.resolve(path, name) if path else None
    return found if found is not None and found.kind == "class" else None


# -- the class's own lists (kept for the older rules and for readers) ------------------------------

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


# -- validate_configuration, folded per backend -----------------------------------------------------

def _folded_facts(tree: SourceTree, folder: Folder, name: str, backend: Symbol,
                  problems: list[str]) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "checks": _checks(folder, name, backend, problems),
        "dtypes": _listed(folder, backend, "supported_dtypes"),
        "kv_cache_storage": _kv_storage(tree, folder, backend, problems, name),
        "kernels": "triton" if _uses_triton_ops(tree, backend) else None,
    }
    for feature, method in (("sink", "supports_sink"), ("mm_prefix", "supports_mm_prefix"), ("mla", "is_mla")):
        facts[feature] = _fold_text(folder, backend, method, {})
    facts["head_sizes"] = _fold_text(folder, backend, "supports_head_size", {"head_size": ast.Name("head_size")})
    return facts


def _fold_text(folder: Folder, cls: Symbol, method: str, args: dict[str, ast.expr]) -> str | None:
    try:
        return folder.text(folder.method(cls, method, args))
    except Unfoldable:
        return None


def _listed(folder: Folder, cls: Symbol, attr: str) -> list[Any] | None:
    try:
        value = folder.class_value(cls, attr)
    except Unfoldable:
        return None
    if isinstance(value, ast.List | ast.Tuple) and all(isinstance(e, ast.Constant) for e in value.elts):
        return [e.value for e in value.elts if isinstance(e, ast.Constant)]
    return None


def _checks(folder: Folder, name: str, backend: Symbol, problems: list[str]) -> list[dict[str, Any]] | None:
    """`validate_configuration`'s checks for this class: each reason with the condition (over
    the inputs) under which the backend reports it."""
    method = folder.find_method(backend, "validate_configuration")
    if method is None or not isinstance(method.node, ast.FunctionDef):
        problems.append(f"attention_backends: {name} has no validate_configuration")
        return None
    params = [a.arg for a in method.node.args.args[1:]]
    scope = Scope(method.path, backend, {p: ast.Name(p, ast.Load()) for p in params if p in CHECK_INPUTS}, {})
    scope.env["cls"] = Ref(backend)
    checks: list[dict[str, Any]] = []
    _collect(folder, method.node.body, scope, ast.Constant(True), checks, name, problems)
    return checks


def _collect(folder: Folder, body: list[ast.stmt], scope: Any, guard: ast.expr, checks: list[dict[str, Any]],
             name: str, problems: list[str]) -> None:
    for stmt in body:
        if isinstance(stmt, ast.If):
            try:
                test = folder.expr(stmt.test, scope)
            except Unfoldable as exc:
                checks.append(_unreadable(folder, stmt.test, scope, _first_reason(stmt), name, exc, problems))
                continue
            _collect(folder, stmt.body, scope, _and(guard, test), checks, name, problems)
            _collect(folder, stmt.orelse, scope, _and(guard, ast.UnaryOp(ast.Not(), test)), checks, name, problems)
        elif _is_append(stmt):
            assert isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            _record(folder, stmt.value.args[0], scope, guard, checks, name, problems)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign) and not _is_list_init(stmt):
            try:
                folder.statement(stmt, scope)
            except Unfoldable as exc:
                problems.append(f"attention_backends: {name} {ast.unparse(stmt)[:40]} not readable ({exc})")


def _record(folder: Folder, arg: ast.expr, scope: Scope, guard: ast.expr, checks: list[dict[str, Any]],
            name: str, problems: list[str]) -> None:
    shown = arg.value if isinstance(arg, ast.Constant) else message_template(arg)
    try:
        when = folder.text(guard)
    except Unfoldable as exc:
        problems.append(f"attention_backends: {name} check {shown!r} not statically readable ({exc})")
        checks.append({"reason": str(shown), "when": None})
        return
    if when == "False":
        return
    if isinstance(arg, ast.Constant) or isinstance(arg, ast.JoinedStr):
        checks.append({"reason": str(shown), "when": when})
        return
    try:  # a reason computed from the inputs (supports_combination's): None means valid
        checks.append({"reason": None, "reason_expr": folder.text(folder.expr(arg, scope)), "when": when})
    except Unfoldable as exc:
        problems.append(f"attention_backends: {name} check {shown!r} not statically readable ({exc})")
        checks.append({"reason": str(shown), "when": None})


# Inputs most stacks leave at vLLM's default, with that default: a check that cannot be read is
# still decided when it cannot trip at the default (`--block-size` unset, no decode context
# parallelism, causal attention ...).
DEFAULTS: dict[str, Any] = {"block_size": None, "use_dcp": False, "use_non_causal": False, "use_pcp": False,
                            "use_kv_connector": False, "use_batch_invariant": False,
                            "use_adaptive_verification": False}


def _unreadable(folder: Folder, test: ast.expr, scope: Scope, reason: str, name: str, exc: Exception,
                problems: list[str]) -> dict[str, Any]:
    """A check the fold cannot read. When it cannot trip while an input keeps its default, say
    so (`passes_when_unset`): it is then unknown only for stacks that set that input."""
    for optional, default in DEFAULTS.items():
        trial = scope.copy()
        trial.env[optional] = ast.Constant(default)
        try:
            if folder.text(folder.expr(test, trial)) == "False":
                return {"reason": reason, "when": None, "passes_when_unset": optional}
        except Unfoldable:
            pass
    problems.append(f"attention_backends: {name} check {reason!r} not statically readable ({exc})")
    return {"reason": reason, "when": None}


def _and(left: ast.expr, right: ast.expr) -> ast.expr:
    if isinstance(left, ast.Constant) and left.value is True:
        return right
    return ast.BoolOp(ast.And(), [left, right])


def _is_append(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append"
            and len(stmt.value.args) == 1)


def _is_list_init(stmt: ast.Assign | ast.AnnAssign) -> bool:
    return isinstance(stmt.value, ast.List) and not stmt.value.elts


def _first_reason(stmt: ast.If) -> str:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append":
            return message_template(node.args[0]) if node.args else "?"
    return ast.unparse(stmt.test)


# -- how a backend stores an FP8 KV cache -----------------------------------------------------------

def _kv_storage(tree: SourceTree, folder: Folder, backend: Symbol, problems: list[str],
                name: str) -> dict[str, str | None] | None:
    """Per FP8 spelling, the torch dtype the backend's cache holds (None: it raises on it): the
    class's `get_[fp8_]dtype_for_*` mapping, else the `self.*fp8_dtype = ...` its implementation
    sets, else `current_platform.fp8_dtype()` where its module views the cache as that (Triton
    views any fp8* cache as the platform's one FP8 type)."""
    assert isinstance(backend.node, ast.ClassDef)
    listed = [d for d in (_listed(folder, backend, "supported_kv_cache_dtypes") or []) if d in FP8_SPELLINGS]
    mapper = next((m for o in tree.mro(backend.path, backend.node) if isinstance(o.node, ast.ClassDef)
                   for m in o.node.body if isinstance(m, ast.FunctionDef) and _MAPPER.match(m.name)), None)
    storage: dict[str, str | None] = {}
    if mapper is not None:  # FLASH_ATTN lists no fp8 but accepts it at run time (FA3): map every spelling
        for spelling in FP8_SPELLINGS:
            try:
                value = folder.method(backend, mapper.name, {mapper.args.args[-1].arg: ast.Constant(spelling)})
                storage[spelling] = value.value if isinstance(value, ast.Constant) else None
            except Unfoldable:
                storage[spelling] = None  # the mapping raises: the backend refuses it at run time
        return storage
    runtime = len([o for o in tree.mro(backend.path, backend.node) if isinstance(o.node, ast.ClassDef)
                   and class_method(o.node, "supports_kv_cache_dtype") is not None]) > 1
    spellings = list(FP8_SPELLINGS) if runtime else listed
    if not spellings:
        return None
    impl = _impl_fp8_dtype(tree, folder, backend) or _platform_fp8(tree, folder, backend)
    if impl is None:
        problems.append(f"attention_backends: {name} FP8 KV storage dtype not statically readable")
        return None
    return {spelling: impl for spelling in spellings}


def _platform_fp8(tree: SourceTree, folder: Folder, backend: Symbol) -> str | None:
    if not tree.contains(backend.path, "current_platform.fp8_dtype()") or folder.platform is None:
        return None
    try:
        value = folder.method(folder.platform, "fp8_dtype", {})
    except Unfoldable:
        return None
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None


def _impl_fp8_dtype(tree: SourceTree, folder: Folder, backend: Symbol) -> str | None:
    get_impl = folder.find_method(backend, "get_impl_cls")
    if get_impl is None or not isinstance(get_impl.node, ast.FunctionDef):
        return None
    returned = next((n.value for n in ast.walk(get_impl.node) if isinstance(n, ast.Return) and n.value), None)
    impl = tree.resolve_expr(get_impl.path, returned) if isinstance(returned, ast.expr) else None
    if impl is None or not isinstance(impl.node, ast.ClassDef):
        return None
    init = class_method(impl.node, "__init__")
    for node in ast.walk(init) if init is not None else []:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr.endswith("fp8_dtype")):
            try:
                value = folder.expr(node.value, Scope(impl.path, impl, {}, {}))
            except Unfoldable:
                return None
            return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
    return None


def _uses_triton_ops(tree: SourceTree, backend: Symbol) -> bool:
    """The backend's module imports one of vLLM's Triton attention kernels (`v1/attention/ops/
    triton_*`): what it reads from the cache is compiled by Triton for the GPU."""
    for node in ast.walk(tree.parse(backend.path)):
        if isinstance(node, ast.ImportFrom) and node.module and ".ops.triton_" in f".{node.module}":
            return True
    return False


# -- auto-selection ---------------------------------------------------------------------------------

def _selection(tree: SourceTree, problems: list[str]) -> dict[str, Any] | None:
    path, name = PRIORITIES
    found = tree.resolve(path, name) if tree.has(path) else None
    if found is None or not isinstance(found.node, ast.FunctionDef):
        problems.append("attention_backends: _get_backend_priorities not found (selection not extracted)")
        return None
    params = [a.arg for a in found.node.args.args]
    orders: dict[str, str | None] = {}
    for use_mla in (False, True):
        folder = _folder(tree, PRIORITY_INPUTS)
        args: list[ast.expr] = [ast.Constant(use_mla) if p == "use_mla" else ast.Name(p, ast.Load()) for p in params]
        try:
            orders["mla" if use_mla else "default"] = folder.text(folder.call(found, args, {}, None))
        except Unfoldable as exc:
            problems.append(f"attention_backends: {'MLA ' if use_mla else ''}priority order not readable ({exc})")
            orders["mla" if use_mla else "default"] = None
    return {"source": f"{path} {name}", "inputs": [p for p in params if p != "use_mla"],
            "priorities": orders, "fa_version": _fa_version(tree, problems)}


def _fa_version(tree: SourceTree, problems: list[str]) -> str | None:
    """The FlashAttention generation `get_flash_attn_version()` picks (no head size, no ALiBi:
    how the backends' `supports_*` checks call it), as an expression of the GPU."""
    for path in FA_UTILS:
        found = tree.resolve(path, "get_flash_attn_version") if tree.has(path) else None
        if found is None or not isinstance(found.node, ast.FunctionDef):
            continue
        folder = _folder(tree, frozenset({"device_capability"}))
        try:
            return folder.text(folder.call(found, [], {"requires_alibi": ast.Constant(False),
                                                        "head_size": ast.Constant(None)}, None))
        except Unfoldable as exc:
            problems.append(f"attention_backends: get_flash_attn_version not readable ({exc})")
            return None
    problems.append("attention_backends: get_flash_attn_version not found")
    return None
