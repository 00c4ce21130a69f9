"""`AttentionBackend.validate_configuration` (`v1/attention/backend.py`), folded per backend: each
reason the backend reports, with the condition over its inputs under which it reports it.
"""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.fold_ast import Ref, Scope, Unfoldable, simplify
from tools.vllm_release.predicates import Folder
from tools.vllm_release.source_tree import Symbol, message_template

# The names an expression may keep: validate_configuration's inputs (every release's superset),
# the priority function's, and the FlashAttention generation.
CHECK_INPUTS = frozenset({
    "head_size", "dtype", "kv_cache_dtype", "block_size", "use_mla", "has_sink", "use_sparse",
    "use_mm_prefix", "use_per_head_quant_scales", "device_capability", "attn_type", "has_sliding_window",
    "use_non_causal", "use_batch_invariant", "use_kv_connector", "use_pcp", "use_dcp", "use_rswa",
    "use_adaptive_verification", "fa_version",
})


def validate_checks(folder: Folder, name: str, backend: Symbol, problems: list[str]) -> list[dict[str, Any]] | None:
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
                when = _block_size_when(folder, scope) if _first_reason(stmt) == BLOCK_SIZE_REASON else None
                checks.append({"reason": BLOCK_SIZE_REASON, "when": when} if when is not None else
                              _unreadable(folder, stmt.test, scope, _first_reason(stmt), name, exc, problems))
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


BLOCK_SIZE_REASON = "block_size not supported"


def _block_size_when(folder: Folder, scope: Scope) -> str | None:
    """The base class's `supports_block_size` loops over `get_supported_kernel_block_sizes()`
    (a size must be a multiple of one of them, `MultipleOf(n)` counting as n); where the backend
    returns a fixed list (FlashInfer: 16, 32, 64) that loop is written out as one condition. A
    body that branches first is folded (v0.34 FlashInfer offers pages >= 128 only when the
    current vLLM config says Blackwell TRT-LLM can use them; with no config - the machine fact
    `predicates.ASSUMED` states - it returns 16, 32, 64). None where the list depends on the
    model (FlashAttention's on a hybrid model's Mamba cache)."""
    cls = scope.env.get("cls")
    found = folder.find_method(cls.symbol, "get_supported_kernel_block_sizes") if isinstance(cls, Ref) else None
    if found is None or not isinstance(found.node, ast.FunctionDef) or not isinstance(cls, Ref):
        return None
    body = [s for s in found.node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.List | ast.Tuple):
        listed: ast.expr = body[0].value
    else:
        try:
            listed = simplify(folder.call(found, [], {}, cls.symbol))
        except Unfoldable:
            return None
    if not isinstance(listed, ast.List | ast.Tuple):
        return None
    bases = []
    for item in listed.elts:
        size = item.args[0] if isinstance(item, ast.Call) and ast.unparse(item.func).endswith("MultipleOf") \
            and item.args else item
        if not (isinstance(size, ast.Constant) and isinstance(size.value, int)):
            return None
        bases.append(size.value)
    if not bases:
        return "False"
    return "block_size is not None and not (" + " or ".join(f"block_size % {b} == 0" for b in bases) + ")"


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

