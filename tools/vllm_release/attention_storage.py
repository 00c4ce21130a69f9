"""How an attention backend stores an FP8 KV cache, and whether Triton compiles what reads it."""

from __future__ import annotations

import ast
import re
from typing import Any

from tools.vllm_release.fold_ast import Scope, Unfoldable
from tools.vllm_release.predicates import Folder
from tools.vllm_release.source_tree import SourceTree, Symbol, class_method

FP8_SPELLINGS = ("fp8", "fp8_e4m3", "fp8_e5m2")
# Where an MLA backend's cache is viewed before its kernel reads it: the MLA attention layer's
# forward (`kv_cache.view(current_platform.fp8_dtype())`), in the common MLA module before v0.17.
MLA_CACHE_VIEWERS = ("vllm/model_executor/layers/attention/mla_attention.py",
                     "vllm/v1/attention/backends/mla/common.py")
_MLA_VIEW = "view(current_platform.fp8_dtype())"
_MAPPER = re.compile(r"get_(fp8_)?dtype_for_")


def listed(folder: Folder, cls: Symbol, attr: str) -> list[Any] | None:
    try:
        value = folder.class_value(cls, attr)
    except Unfoldable:
        return None
    if isinstance(value, ast.List | ast.Tuple) and all(isinstance(e, ast.Constant) for e in value.elts):
        return [e.value for e in value.elts if isinstance(e, ast.Constant)]
    return None


def kv_storage(tree: SourceTree, folder: Folder, backend: Symbol, problems: list[str],
                name: str) -> dict[str, str | None] | None:
    """Per FP8 spelling, the torch dtype the backend's cache holds (None: it raises on it): the
    class's `get_[fp8_]dtype_for_*` mapping, else the `self.*fp8_dtype = ...` its implementation
    sets, else `current_platform.fp8_dtype()` where its module views the cache as that (Triton
    views any fp8* cache as the platform's one FP8 type)."""
    assert isinstance(backend.node, ast.ClassDef)
    fp8_listed = [d for d in (listed(folder, backend, "supported_kv_cache_dtypes") or []) if d in FP8_SPELLINGS]
    mapper = next((m for o in tree.mro(backend.path, backend.node) if isinstance(o.node, ast.ClassDef)
                   for m in o.node.body if isinstance(m, ast.FunctionDef) and _MAPPER.match(m.name)), None)
    storage: dict[str, str | None] = {}
    if mapper is not None:  # FLASH_ATTN lists no fp8 but accepts it at run time (FA3): map every spelling
        for spelling in FP8_SPELLINGS:
            try:
                value = folder.method(backend, mapper.name, {mapper.args.args[-1].arg: ast.Constant(spelling)})
                storage[spelling] = _dtype_name(value)
            except Unfoldable:
                storage[spelling] = None  # the mapping raises: the backend refuses it at run time
        return storage
    runtime = len([o for o in tree.mro(backend.path, backend.node) if isinstance(o.node, ast.ClassDef)
                   and class_method(o.node, "supports_kv_cache_dtype") is not None]) > 1
    spellings = list(FP8_SPELLINGS) if runtime else fp8_listed
    if not spellings:
        return None
    impl = _impl_fp8_dtype(tree, folder, backend) or _platform_fp8(tree, folder, backend)
    if impl is None:
        problems.append(f"attention_backends: {name} FP8 KV storage dtype not statically readable")
        return None
    return {spelling: impl for spelling in spellings}


def _is_mla(folder: Folder, backend: Symbol) -> bool:
    try:
        value = folder.method(backend, "is_mla", {})
    except Unfoldable:
        return False
    return isinstance(value, ast.Constant) and value.value is True


def _platform_fp8(tree: SourceTree, folder: Folder, backend: Symbol) -> str | None:
    """The platform's FP8 type where the backend's module, or for an MLA backend the MLA layer
    that hands it the cache, views the cache as it."""
    viewed = tree.contains(backend.path, "current_platform.fp8_dtype()") or (_is_mla(folder, backend) and any(
        tree.has(p) and tree.contains(p, _MLA_VIEW) for p in MLA_CACHE_VIEWERS))
    if not viewed or folder.platform is None:
        return None
    try:
        value = folder.method(folder.platform, "fp8_dtype", {})
    except Unfoldable:
        return None
    return _dtype_name(value)


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
            return _dtype_name(value)
    return None


def uses_triton_ops(tree: SourceTree, backend: Symbol) -> bool:
    """The backend's module imports one of vLLM's Triton attention kernels (`v1/attention/ops/
    triton_*`): what it reads from the cache is compiled by Triton for the GPU."""
    for node in ast.walk(tree.parse(backend.path)):
        if isinstance(node, ast.ImportFrom) and node.module and ".ops.triton_" in f".{node.module}":
            return True
    return False


def _dtype_name(value: ast.expr) -> str | None:
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
