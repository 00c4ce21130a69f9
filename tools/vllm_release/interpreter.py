"""A small abstract interpreter for the functions that build vLLM's `vllm serve` argument parser.

It executes, on the AST, `ServeSubcommand.subparser_init` -> `make_arg_parser` ->
`FrontendArgs.add_cli_args` / `AsyncEngineArgs.add_cli_args` ... exactly as written in the release:
local variables, `get_kwargs(Config)` tables and their mutations (`kw["x"]["type"] = json.loads`,
`del ...["nargs"]`, `+=` on choices), loops over `kwargs.items()`, f-strings, `super()` calls, and
every `add_argument(...)` call, whose option strings and kwargs are recorded. Anything it cannot know
(sys.argv, plugins, platform hooks) is `UNKNOWN`; an `if` on an unknown test runs both branches.
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tools.vllm_release.source_tree import SourceTree, Symbol, class_body_value, class_method
from tools.vllm_release.type_hints import HintReader, TypeFn
from tools.vllm_release.values import (
    COMPARE,
    HUMAN_READABLE,
    UNKNOWN,
    AddArgument,
    BoundMethod,
    ClassRef,
    EnumMember,
    ExternalRef,
    FuncRef,
    LiteralRef,
    ParserRef,
    SuperRef,
    binop,
    boolop,
    callee_name,
)

_SAFE_METHODS = {"items", "keys", "values", "pop", "get", "copy", "replace", "join", "lower",
                 "upper", "startswith", "endswith", "split", "strip", "format", "append", "extend",
                 "update", "removeprefix", "removesuffix"}
_PARSER_FACTORIES = {"add_argument_group", "add_mutually_exclusive_group", "add_parser"}
_BUILTIN_CONVERSIONS: dict[str, Callable[[Any], Any]] = {"list": list, "tuple": tuple, "sorted": sorted}


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


@dataclass
class Interpreter:
    tree: SourceTree
    hints: HintReader
    calls: list[AddArgument] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    _depth: int = 0

    # -- entry points ------------------------------------------------------------------------

    def run_method(self, path: str, class_name: str, method: str, args: list[Any]) -> Any:
        symbol = self.tree.resolve(path, class_name)
        if symbol is None or not isinstance(symbol.node, ast.ClassDef):
            self.problems.append(f"{path}: class {class_name} not found")
            return UNKNOWN
        func = self._method(ClassRef(symbol.path, symbol.node), method, None)
        if func is None:
            self.problems.append(f"{path}: {class_name}.{method} not found")
            return UNKNOWN
        return self.call(func, [UNKNOWN, *args] if _takes_self(func.node) else args, {})

    # -- calls -------------------------------------------------------------------------------

    def call(self, func: FuncRef, args: list[Any], kwargs: dict[str, Any]) -> Any:
        if self._depth > 10:
            return UNKNOWN
        env: dict[str, Any] = {}
        params = [a.arg for a in func.node.args.posonlyargs + func.node.args.args]
        if func.bound is not None and _is_classmethod(func.node):
            env[params[0]] = func.bound
            params = params[1:]
        defaults = func.node.args.defaults
        for name, default in zip(params[len(params) - len(defaults):], defaults, strict=True):
            env[name] = self.eval(default, func.path, {}, func)
        env.update(zip(params, args, strict=False))
        env.update({k: v for k, v in kwargs.items() if k in params})
        self._depth += 1
        try:
            self.exec_block(func.node.body, func.path, env, func)
        except _Return as ret:
            return ret.value
        finally:
            self._depth -= 1
        return None

    def _method(self, cls: ClassRef, name: str, bound: ClassRef | None) -> FuncRef | None:
        for ancestor in self.tree.mro(cls.path, cls.node):
            assert isinstance(ancestor.node, ast.ClassDef)
            method = class_method(ancestor.node, name)
            if method is not None:
                owner = ClassRef(ancestor.path, ancestor.node)
                return FuncRef(ancestor.path, method, bound or cls, owner)
        return None

    # -- statements --------------------------------------------------------------------------

    def exec_block(self, body: list[ast.stmt], path: str, env: dict[str, Any], fn: FuncRef) -> None:
        for stmt in body:
            self.exec(stmt, path, env, fn)

    def exec(self, stmt: ast.stmt, path: str, env: dict[str, Any], fn: FuncRef) -> None:
        if isinstance(stmt, ast.Expr):
            self.eval(stmt.value, path, env, fn)
        elif isinstance(stmt, ast.Assign):
            value = self.eval(stmt.value, path, env, fn)
            for target in stmt.targets:
                self._assign(target, value, path, env, fn)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._assign(stmt.target, self.eval(stmt.value, path, env, fn), path, env, fn)
        elif isinstance(stmt, ast.AugAssign):
            current = self.eval(stmt.target, path, env, fn)
            update = self.eval(stmt.value, path, env, fn)
            both_known = current is not UNKNOWN and update is not UNKNOWN
            result = binop(stmt.op, current, update) if both_known else UNKNOWN
            self._assign(stmt.target, result, path, env, fn)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Subscript):
                    container = self.eval(target.value, path, env, fn)
                    key = self.eval(target.slice, path, env, fn)
                    if isinstance(container, dict):
                        container.pop(key, None)
        elif isinstance(stmt, ast.If):
            test = self.eval(stmt.test, path, env, fn)
            if test is UNKNOWN or test:
                self.exec_block(stmt.body, path, env, fn)
            if test is UNKNOWN or not test:
                self.exec_block(stmt.orelse, path, env, fn)
        elif isinstance(stmt, ast.For):
            self._for(stmt, path, env, fn)
        elif isinstance(stmt, ast.Return):
            raise _Return(self.eval(stmt.value, path, env, fn) if stmt.value else None)
        elif isinstance(stmt, ast.Try):
            self.exec_block(stmt.body, path, env, fn)
        elif isinstance(stmt, ast.With):
            self.exec_block(stmt.body, path, env, fn)
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                found = self.tree.resolve_import(path, stmt, alias.name)
                env[alias.asname or alias.name] = (
                    self._from_symbol(found) if found
                    else ExternalRef(f"{stmt.module}.{alias.name}")
                )
        elif isinstance(stmt, ast.FunctionDef):
            env[stmt.name] = FuncRef(path, stmt)

    def _iterable(self, value: Any) -> list[Any] | None:
        if isinstance(value, ClassRef):  # iterating an Enum class yields its members
            return [EnumMember(name, self.eval(node, value.path, {}, None))
                    for name, node in _enum_members(value.node)]
        if value is UNKNOWN or not hasattr(value, "__iter__"):
            return None
        return list(value)

    def _for(self, stmt: ast.For, path: str, env: dict[str, Any], fn: FuncRef) -> None:
        iterable = self._iterable(self.eval(stmt.iter, path, env, fn))
        if iterable is None:
            return
        for item in iterable:
            self._assign(stmt.target, item, path, env, fn)
            self.exec_block(stmt.body, path, env, fn)

    def _assign(self, target: ast.expr, value: Any, path: str, env: dict[str, Any], fn: FuncRef) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value, path, env, fn)
            key = self.eval(target.slice, path, env, fn)
            if isinstance(container, dict) and key is not UNKNOWN:
                container[key] = value
        elif isinstance(target, ast.Tuple | ast.List):
            parts = list(value) if isinstance(value, list | tuple) else [UNKNOWN] * len(target.elts)
            for sub, part in zip(target.elts, parts, strict=False):
                self._assign(sub, part, path, env, fn)

    # -- expressions -------------------------------------------------------------------------

    def eval(self, node: ast.expr | None, path: str, env: dict[str, Any], fn: FuncRef | None) -> Any:
        if node is None:
            return None
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id] if node.id in env else self._global(path, node.id)
        if isinstance(node, ast.Attribute):
            return self._attribute(self.eval(node.value, path, env, fn), node.attr)
        if isinstance(node, ast.Subscript):
            container = self.eval(node.value, path, env, fn)
            key = self.eval(node.slice, path, env, fn)
            try:
                return container[key] if container is not UNKNOWN and key is not UNKNOWN else UNKNOWN
            except (KeyError, IndexError, TypeError):
                return UNKNOWN
        if isinstance(node, ast.Call):
            return self._call_expr(node, path, env, fn)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            items: list[Any] = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    spread = self.eval(elt.value, path, env, fn)
                    items.extend(spread if isinstance(spread, list | tuple) else [UNKNOWN])
                else:
                    items.append(self.eval(elt, path, env, fn))
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            result: dict[Any, Any] = {}
            for key, value in zip(node.keys, node.values, strict=True):
                evaluated = self.eval(value, path, env, fn)
                if key is None:
                    if isinstance(evaluated, dict):
                        result.update(evaluated)
                else:
                    result[self.eval(key, path, env, fn)] = evaluated
            return result
        if isinstance(node, ast.JoinedStr):
            parts = [self.eval(v, path, env, fn) for v in node.values]
            return "".join(str(p) for p in parts) if UNKNOWN not in parts else UNKNOWN
        if isinstance(node, ast.FormattedValue):
            return self.eval(node.value, path, env, fn)
        if isinstance(node, ast.BoolOp):
            return boolop(node, [self.eval(v, path, env, fn) for v in node.values])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = self.eval(node.operand, path, env, fn)
            return UNKNOWN if operand is UNKNOWN else not operand
        if isinstance(node, ast.Compare):
            return self._compare(node, path, env, fn)
        if isinstance(node, ast.BinOp):
            left, right = self.eval(node.left, path, env, fn), self.eval(node.right, path, env, fn)
            return UNKNOWN if UNKNOWN in (left, right) else binop(node.op, left, right)
        if isinstance(node, ast.Lambda):
            return TypeFn("str")  # a custom converter: its values are free text
        if isinstance(node, ast.ListComp) and len(node.generators) == 1:
            return self._listcomp(node, path, env, fn)
        if isinstance(node, ast.IfExp):
            test = self.eval(node.test, path, env, fn)
            return UNKNOWN if test is UNKNOWN else self.eval(node.body if test else node.orelse, path, env, fn)
        return UNKNOWN

    def _global(self, path: str, name: str) -> Any:
        found = self.tree.resolve(path, name)
        if found is None:
            return ExternalRef(name)
        return self._from_symbol(found)

    def _from_symbol(self, found: Symbol) -> Any:
        if found.kind == "class" and isinstance(found.node, ast.ClassDef):
            return ClassRef(found.path, found.node)
        if found.kind == "function" and isinstance(found.node, ast.FunctionDef):
            return FuncRef(found.path, found.node)
        if found.kind == "value" and isinstance(found.node, ast.expr):
            value = found.node
            if isinstance(value, ast.Subscript):  # a Literal alias, for get_args()
                members = self.hints.hints(found.path, value)
                if len(members) == 1 and members[0].kind == "literal":
                    return LiteralRef(members[0].values)
            if isinstance(value, ast.Constant | ast.List | ast.Tuple | ast.Set | ast.Dict):
                return self.eval(value, found.path, {}, None)
            return UNKNOWN
        return ExternalRef(found.name) if found.kind == "module" else UNKNOWN

    def _attribute(self, obj: Any, attr: str) -> Any:
        if isinstance(obj, EnumMember):
            return obj.value if attr == "value" else obj.name if attr == "name" else UNKNOWN
        if isinstance(obj, ExternalRef):
            return ExternalRef(f"{obj.dotted}.{attr}")
        if isinstance(obj, ClassRef):
            if attr == "__name__":
                return obj.node.name
            method = self._method(obj, attr, None)
            if method is not None:
                return method
            value = class_body_value(obj.node, attr)
            return self.eval(value, obj.path, {}, None) if value is not None else UNKNOWN
        if isinstance(obj, SuperRef):
            for base in self.tree.class_bases(obj.owner.path, obj.owner.node):
                assert isinstance(base.node, ast.ClassDef)
                method = self._method(ClassRef(base.path, base.node), attr, obj.bound)
                if method is not None:
                    return method
            return UNKNOWN
        if obj is UNKNOWN or isinstance(obj, ParserRef):
            return BoundMethod(obj, attr)  # parser objects: add_argument & co. are recorded
        return BoundMethod(obj, attr) if attr in _SAFE_METHODS and hasattr(obj, attr) else UNKNOWN

    def _call_expr(self, node: ast.Call, path: str, env: dict[str, Any], fn: FuncRef | None) -> Any:
        if isinstance(node.func, ast.Name) and node.func.id == "super" and fn and fn.owner:
            return SuperRef(fn.owner, fn.bound)
        callee = self.eval(node.func, path, env, fn)
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                spread = self.eval(arg.value, path, env, fn)
                args.extend(spread if isinstance(spread, list | tuple) else [UNKNOWN])
            else:
                args.append(self.eval(arg, path, env, fn))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            value = self.eval(kw.value, path, env, fn)
            if kw.arg is not None:
                kwargs[kw.arg] = value
            elif isinstance(value, dict):
                kwargs.update(value)
        return self._apply(callee, args, kwargs, path)

    def _apply(self, callee: Any, args: list[Any], kwargs: dict[str, Any], path: str) -> Any:
        name = callee_name(callee)
        if isinstance(callee, BoundMethod) and callee.name == "add_argument":
            group = callee.obj.group if isinstance(callee.obj, ParserRef) else None
            self.calls.append(AddArgument([a for a in args if isinstance(a, str)], kwargs, group, path))
            if any(not isinstance(a, str) for a in args):
                self.problems.append(f"{path}: add_argument with an unreadable option string")
            return UNKNOWN
        if isinstance(callee, BoundMethod) and callee.name in _PARSER_FACTORIES:
            title = kwargs.get("title", args[0] if args else None)
            return ParserRef(title if isinstance(title, str) else None)
        if name == "get_kwargs" and args and isinstance(args[0], ClassRef):
            return self._get_kwargs(args[0])
        if name in ("optional_type", "parse_type") and args:
            return args[0]
        if name in HUMAN_READABLE:
            return TypeFn("int", human_readable=True)
        if name in _BUILTIN_CONVERSIONS and args and isinstance(args[0], list | tuple | dict):
            return _BUILTIN_CONVERSIONS[name](args[0])
        if name == "permutations" and args and isinstance(args[0], list | tuple):
            return list(itertools.permutations(args[0], kwargs.get("r", args[1] if len(args) > 1 else None)))
        if name == "get_args" and args and isinstance(args[0], LiteralRef):
            return args[0].values
        if isinstance(callee, BoundMethod) and callee.obj is not UNKNOWN:
            if UNKNOWN in args or UNKNOWN in kwargs.values():
                return UNKNOWN
            try:
                return getattr(callee.obj, callee.name)(*args, **kwargs)
            except (TypeError, ValueError, KeyError, AttributeError):
                return UNKNOWN
        # only functions that build the parser run: they receive the parser or a kwargs table
        # (plugin loading, platform hooks and registries stay unexecuted)
        if isinstance(callee, FuncRef) and any(
            isinstance(a, ParserRef | dict) for a in [*args, *kwargs.values()]
        ):
            return self.call(callee, args, kwargs)
        return UNKNOWN

    def _get_kwargs(self, cls: ClassRef) -> dict[str, dict[str, Any]]:
        infos = self.hints.fields(cls.path, cls.node)
        return {info.name: copy.deepcopy(self.hints.field_kwargs(info)) for info in infos}

    def _compare(self, node: ast.Compare, path: str, env: dict[str, Any], fn: FuncRef | None) -> Any:
        left = self.eval(node.left, path, env, fn)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.eval(right_node, path, env, fn)
            if UNKNOWN in (left, right):
                return UNKNOWN
            try:
                ok = COMPARE[type(op)](left, right)
            except (KeyError, TypeError):
                return UNKNOWN
            if not ok:
                return False
            left = right
        return True

    def _listcomp(self, node: ast.ListComp, path: str, env: dict[str, Any], fn: FuncRef | None) -> Any:
        gen = node.generators[0]
        iterable = self._iterable(self.eval(gen.iter, path, env, fn))
        if iterable is None:
            return UNKNOWN
        out = []
        for item in iterable:
            local = dict(env)
            if not isinstance(gen.target, ast.Name):
                return UNKNOWN
            local[gen.target.id] = item
            if all(self.eval(cond, path, local, fn) is True for cond in gen.ifs):
                out.append(self.eval(node.elt, path, local, fn))
        return UNKNOWN if UNKNOWN in out else out


def _enum_members(node: ast.ClassDef) -> list[tuple[str, ast.expr]]:
    return [(t.id, stmt.value) for stmt in node.body if isinstance(stmt, ast.Assign)
            for t in stmt.targets if isinstance(t, ast.Name) and not t.id.startswith("_")]


def _is_classmethod(node: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list)


def _takes_self(node: ast.FunctionDef) -> bool:
    static = any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list)
    return not static
