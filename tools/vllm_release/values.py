"""The values the serve-parser interpreter computes with (see interpreter.py)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
# callables vLLM passes as argparse `type=`, by name -> the values they accept
TYPE_FUNCS = {"str": "str", "int": "int", "float": "float", "bool": "bool", "loads": "json",
              "union_dict_and_str": "json", "parse_dataclass": "json"}
HUMAN_READABLE = {"human_readable_int", "human_readable_int_or_auto"}


@dataclass(frozen=True)
class ClassRef:
    path: str
    node: ast.ClassDef


@dataclass(frozen=True)
class FuncRef:
    path: str
    node: ast.FunctionDef
    bound: ClassRef | None = None  # `cls` for classmethods, the class for attribute access
    owner: ClassRef | None = None  # the class whose body defines the method (for super())


@dataclass(frozen=True)
class ExternalRef:
    """A name from outside the tree (argparse.BooleanOptionalAction, json.loads, ...)."""

    dotted: str


@dataclass(frozen=True)
class LiteralRef:
    values: tuple[Any, ...]


@dataclass(frozen=True)
class ParserRef:
    group: str | None


@dataclass(frozen=True)
class SuperRef:
    owner: ClassRef
    bound: ClassRef | None


@dataclass(frozen=True)
class EnumMember:
    name: str
    value: Any


@dataclass
class BoundMethod:
    obj: Any
    name: str


@dataclass
class AddArgument:
    """One `add_argument` call as the release makes it."""

    options: list[str]
    kwargs: dict[str, Any]
    group: str | None
    path: str


COMPARE: dict[type, Any] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b,
}


def binop(op: ast.operator, left: Any, right: Any) -> Any:
    if isinstance(op, ast.Add) and type(left) is type(right) and isinstance(left, str | list | tuple | int):
        return left + right
    return UNKNOWN


def boolop(node: ast.BoolOp, values: list[Any]) -> Any:
    if isinstance(node.op, ast.And):
        if any(v is not UNKNOWN and not v for v in values):
            return False
        return UNKNOWN if UNKNOWN in values else True
    if any(v is not UNKNOWN and v for v in values):
        return True
    return UNKNOWN if UNKNOWN in values else False


def callee_name(callee: Any) -> str:
    if isinstance(callee, FuncRef):
        return callee.node.name
    if isinstance(callee, ExternalRef):
        return callee.dotted.rsplit(".", 1)[-1]
    return ""
