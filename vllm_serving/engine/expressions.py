"""Evaluate the conditions the release registry stores as expression text.

The generator (`tools/vllm_release/predicates.py`) folds vLLM's own checks into Python expressions
over a few named inputs - `not head_size in [64, 128, 256]`, `has_sink and device_capability <
(9, 0)`, `max_num_partial_prefills != 1`. They are evaluated here on the AST with a whitelist
(constants, names, comparisons, boolean and arithmetic operators, conditional expressions,
`str.startswith`/`endswith`/`upper`, `.major`/`.minor` of a compute capability): nothing is `eval`ed,
and a name the caller does not supply raises `MissingInput`.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, NamedTuple


class Capability(NamedTuple):
    """A GPU's compute capability as vLLM's `DeviceCapability`: compares as a tuple, has .major."""

    major: int
    minor: int


class MissingInput(KeyError):
    """The expression reads an input the caller did not give."""


class Unsupported(ValueError):
    """The text holds something outside the whitelist (a registry from a newer generator)."""


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv,
}
_METHODS = frozenset({"startswith", "endswith", "upper"})
_ATTRIBUTES = frozenset({"major", "minor"})


@lru_cache(maxsize=2048)
def _parse(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def evaluate(text: str, values: Mapping[str, Any]) -> Any:
    """The value of `text` with its names bound to `values`."""
    return _eval(_parse(text), values)


def names_in(text: str) -> frozenset[str]:
    """The inputs an expression reads."""
    return frozenset(n.id for n in ast.walk(_parse(text)) if isinstance(n, ast.Name))


def _eval(node: ast.expr, values: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise MissingInput(node.id)
        return values[node.id]
    if isinstance(node, ast.BoolOp):
        result: Any = isinstance(node.op, ast.And)
        for value in node.values:
            result = _eval(value, values)
            if bool(result) != isinstance(node.op, ast.And):
                return result
        return result
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _eval(node.operand, values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, values)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, values)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left, values), _eval(node.right, values))
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, values) else node.orelse, values)
    if isinstance(node, ast.Tuple):
        return tuple(_items(node.elts, values))
    if isinstance(node, ast.List):
        return _items(node.elts, values)
    if isinstance(node, ast.Attribute) and node.attr in _ATTRIBUTES:
        return getattr(_eval(node.value, values), node.attr)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _METHODS
            and not node.keywords):
        owner = _eval(node.func.value, values)
        if not isinstance(owner, str):
            return False  # `None.startswith` cannot happen in vLLM: its guards check None first
        return getattr(owner, node.func.attr)(*(_eval(a, values) for a in node.args))
    raise Unsupported(ast.dump(node)[:80])


def _items(elts: list[ast.expr], values: Mapping[str, Any]) -> list[Any]:
    items: list[Any] = []
    for elt in elts:
        if isinstance(elt, ast.Starred):
            items.extend(_eval(elt.value, values))
        else:
            items.append(_eval(elt, values))
    return items
