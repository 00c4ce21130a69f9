"""The AST pieces the fold (predicates.py) builds expressions from, and the constant folding that
keeps those expressions small: what does not depend on an input is computed, `and`/`or`
short-circuit as Python does, and the platform's capability predicates
(`platforms/interface.py`) become comparisons of the input `device_capability`.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tools.vllm_release.source_tree import Symbol


class Unfoldable(Exception):
    """The function depends on something other than the named inputs."""


class Ref(ast.expr):
    """A name that resolved to a definition in the tree (a class, a function or a module);
    `bound` is the class `cls` stands for, for methods reached through a class."""

    def __init__(self, symbol: Symbol, bound: Symbol | None = None) -> None:
        super().__init__()
        self.symbol = symbol
        self.bound = bound


class CurrentPlatform(ast.expr):
    """`current_platform`."""


@dataclass
class Scope:
    path: str
    bound: Symbol | None
    env: dict[str, ast.expr]
    extra: dict[str, Any]

    def copy(self) -> Scope:
        return Scope(self.path, self.bound, dict(self.env), dict(self.extra))


def item(value: ast.expr, index: int) -> ast.expr:
    """`value[index]` of a folded tuple, through the branches of a conditional."""
    if isinstance(value, ast.Tuple | ast.List) and -len(value.elts) <= index < len(value.elts):
        return value.elts[index]
    if isinstance(value, ast.IfExp):
        return ast.IfExp(value.test, item(value.body, index), item(value.orelse, index))
    raise Unfoldable("subscript")


def _capability(major: int, minor: int) -> ast.Tuple:
    return ast.Tuple([ast.Constant(major), ast.Constant(minor)], ast.Load())


def _device() -> ast.Name:
    return ast.Name("device_capability", ast.Load())


def to_int(cap: ast.expr) -> ast.expr:
    return ast.BinOp(ast.BinOp(ast.Attribute(cap, "major", ast.Load()), ast.Mult(), ast.Constant(10)),
                     ast.Add(), ast.Attribute(cap, "minor", ast.Load()))


def platform_capability(method: str, args: list[ast.expr]) -> ast.expr | None:
    """platforms/interface.py's capability predicates, as comparisons of `device_capability`."""
    if method == "get_device_capability":
        return _device()
    if not args:
        return None
    arg = simplify(args[0])
    if isinstance(arg, ast.Constant) and isinstance(arg.value, int):
        target: ast.expr = _capability(arg.value // 10, arg.value % 10)
        number = arg.value
    elif isinstance(arg, ast.Tuple):
        target, number = arg, -1
    else:
        return None
    if method == "has_device_capability":
        return ast.Compare(_device(), [ast.GtE()], [target])
    if method == "is_device_capability":
        return ast.Compare(_device(), [ast.Eq()], [target])
    if method == "is_device_capability_family" and number >= 0:
        return ast.Compare(ast.Attribute(_device(), "major", ast.Load()), [ast.Eq()], [ast.Constant(number // 10)])
    return None


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv,
}
_COMPARES: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}


def constant_value(node: ast.expr) -> tuple[bool, Any]:
    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, ast.Tuple | ast.List) and all(constant_value(e)[0] for e in node.elts):
        values = [constant_value(e)[1] for e in node.elts]
        return True, tuple(values) if isinstance(node, ast.Tuple) else values
    return False, None


def simplify(node: ast.expr) -> ast.expr:
    """Constant-fold what does not depend on an input (short-circuiting `and`/`or`)."""
    if isinstance(node, ast.BoolOp):
        values = [simplify(v) for v in node.values]
        kept: list[ast.expr] = []
        for value in values:
            known, constant = constant_value(value)
            if not known:
                kept.append(value)
            elif isinstance(node.op, ast.And) and not constant:
                return ast.Constant(False)
            elif isinstance(node.op, ast.Or) and constant:
                return ast.Constant(True)
        if not kept:
            return ast.Constant(isinstance(node.op, ast.And))
        return kept[0] if len(kept) == 1 else ast.BoolOp(node.op, kept)
    if isinstance(node, ast.UnaryOp):
        operand = simplify(node.operand)
        known, constant = constant_value(operand)
        if known and isinstance(node.op, ast.Not):
            return ast.Constant(not constant)
        if known and isinstance(node.op, ast.USub):
            return ast.Constant(-constant)
        if isinstance(node.op, ast.Not) and isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.Not):
            return operand.operand  # not not x: x (every test here is a bool)
        return ast.UnaryOp(node.op, operand)
    if isinstance(node, ast.Compare):
        left, rights = simplify(node.left), [simplify(c) for c in node.comparators]
        if len(rights) == 1 and all(constant_value(n)[0] for n in (left, rights[0])):
            compare = _COMPARES[type(node.ops[0])]
            return ast.Constant(bool(compare(constant_value(left)[1], constant_value(rights[0])[1])))
        return ast.Compare(left, node.ops, rights)
    if isinstance(node, ast.BinOp):
        left, right = simplify(node.left), simplify(node.right)
        if constant_value(left)[0] and constant_value(right)[0] and type(node.op) in _BINOPS:
            return ast.Constant(_BINOPS[type(node.op)](constant_value(left)[1], constant_value(right)[1]))
        return ast.BinOp(left, node.op, right)
    if isinstance(node, ast.IfExp):
        test = simplify(node.test)
        known, constant = constant_value(test)
        if known:
            return simplify(node.body if constant else node.orelse)
        body, orelse = simplify(node.body), simplify(node.orelse)
        if ast.dump(body) == ast.dump(orelse):
            return body
        if constant_value(body) == (True, True) and constant_value(orelse) == (True, False):  # `True if x else False`
            return test
        if constant_value(body) == (True, False) and constant_value(orelse) == (True, True):
            return simplify(ast.UnaryOp(ast.Not(), test))
        return ast.IfExp(test, body, orelse)
    if isinstance(node, ast.List | ast.Tuple):
        elts: list[ast.expr] = []
        for e in node.elts:
            e = simplify(e)
            if isinstance(e, ast.Starred) and isinstance(e.value, ast.List | ast.Tuple):
                elts.extend(e.value.elts)
            else:
                elts.append(e)
        return type(node)(elts, ast.Load())
    if isinstance(node, ast.Starred):
        return ast.Starred(simplify(node.value), ast.Load())
    return node

