"""Attention backends of a release: what each accepts, and the order CUDA auto-selection tries them.

For every backend of the registry enum (`v1/attention/backends/registry.py`) the release's own
`AttentionBackend.validate_configuration` (`v1/attention/backend.py`) is folded, check by check,
into expressions over its inputs (predicates.py): `head_size not supported` when
`not head_size in [64, 128, 256]`, `attention sinks not supported` when
`has_sink and not device_capability.major == 10`, ... `platforms/cuda.py`
`_get_backend_priorities` is folded the same way, and so is `fa_utils.get_flash_attn_version`
(the FlashAttention generation a GPU gets, which several checks read as `fa_version`).
The checks are read by attention_checks.py, the FP8 KV-cache storage by attention_storage.py.
"""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.attention_checks import CHECK_INPUTS, validate_checks
from tools.vllm_release.attention_storage import kv_storage, listed, uses_triton_ops
from tools.vllm_release.fold_ast import Unfoldable
from tools.vllm_release.predicates import Folder
from tools.vllm_release.source_tree import SourceTree, Symbol, class_body_value, class_method, literal_str

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
PRIORITY_INPUTS = frozenset({"device_capability", "num_heads", "kv_cache_dtype", "use_non_causal",
                             "head_size", "use_mm_prefix"})
ENUMS = frozenset({"AttentionBackendEnum", "_Backend", "KVQuantMode"})  # KVQuantMode: v0.34 get_kv_quant_mode


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
        "checks": validate_checks(folder, name, backend, problems),
        "dtypes": listed(folder, backend, "supported_dtypes"),
        "kv_cache_storage": kv_storage(tree, folder, backend, problems, name),
        "kernels": "triton" if uses_triton_ops(tree, backend) else None,
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
