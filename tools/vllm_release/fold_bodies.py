"""Folding a function's body, statement by statement, into the one expression it returns.

`BodyFolder` inlines a call (binding arguments and defaults), walks the body's assignments,
branches, `try` blocks and list mutations, and turns an `if` on an input into a conditional
expression; what a statement computes is left to `expr`, which predicates.Folder defines.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tools.vllm_release.fold_ast import Ref, Scope, Unfoldable, simplify
from tools.vllm_release.source_tree import SourceTree, Symbol

_MAX_DEPTH = 8


@dataclass
class BodyFolder:
    """A fold of one release's functions; `inputs` are the names an expression may keep."""

    tree: SourceTree
    inputs: frozenset[str]
    enum_names: frozenset[str] = frozenset()  # enums whose members fold to their *name*
    platform: Symbol | None = None
    depth: int = 0
    assumed_used: set[str] = field(default_factory=set)
    _owners: dict[int, Symbol] = field(default_factory=dict)  # method node -> the class defining it

    def expr(self, node: ast.expr, scope: Scope) -> ast.expr:
        """The folded value of one expression (predicates.Folder)."""
        raise NotImplementedError

    def call(self, func: Symbol, args: list[ast.expr], kwargs: dict[str, ast.expr],
             bound: Symbol | None) -> ast.expr:
        # f(a if c else b) is (f(a) if c else f(b)): each branch folds with a known argument
        for i, arg in enumerate(args):
            arg = simplify(arg)
            if isinstance(arg, ast.IfExp):
                then, other = list(args), list(args)
                then[i], other[i] = arg.body, arg.orelse
                return ast.IfExp(arg.test, self.call(func, then, kwargs, bound), self.call(func, other, kwargs, bound))
        node = func.node
        assert isinstance(node, ast.FunctionDef)
        if self.depth > _MAX_DEPTH:
            raise Unfoldable(f"{func.name}: too deep")
        params = [a.arg for a in node.args.posonlyargs + node.args.args]
        decorators = {ast.unparse(d) for d in node.decorator_list}
        env: dict[str, ast.expr] = {}
        if params and ("classmethod" in decorators or params[0] in ("self", "cls")):
            if bound is not None:
                env[params[0]] = Ref(bound)
            params = params[1:]
        defaults = node.args.defaults
        for name, default in zip(params[len(params) - len(defaults):], defaults, strict=True):
            env[name] = default
        kwonly = [a.arg for a in node.args.kwonlyargs]
        for name, kw_default in zip(kwonly, node.args.kw_defaults, strict=True):
            if kw_default is not None:
                env[name] = kw_default
        env.update(zip(params, args, strict=False))
        env.update({k: v for k, v in kwargs.items() if k in params or k in kwonly})
        self.depth += 1
        try:
            scope = Scope(func.path, bound, env, {"owner": self._owners.get(id(node))})
            result = self.block(node.body, scope)
        finally:
            self.depth -= 1
        if result is None:
            return ast.Constant(None)
        return result

    def block(self, body: list[ast.stmt], scope: Scope) -> ast.expr | None:
        """The value a statement list returns, or None when it falls off the end."""
        for i, stmt in enumerate(body):
            rest = body[i + 1:]
            if isinstance(stmt, ast.Return):
                return self.expr(stmt.value, scope) if stmt.value is not None else ast.Constant(None)
            if isinstance(stmt, ast.If):
                test = simplify(self.expr(stmt.test, scope))
                if isinstance(test, ast.Constant):
                    return self.block((stmt.body if test.value else stmt.orelse) + rest, scope)
                then = self.block(stmt.body + rest, scope.copy())
                other = self.block(stmt.orelse + rest, scope.copy())
                return ast.IfExp(test, then or ast.Constant(None), other or ast.Constant(None))
            if isinstance(stmt, ast.Try):
                return self.block(stmt.body + stmt.finalbody + rest, scope)
            if isinstance(stmt, ast.Raise):
                raise Unfoldable("raises")
            self.statement(stmt, scope)
        return None

    def statement(self, stmt: ast.stmt, scope: Scope) -> None:
        if isinstance(stmt, ast.Pass | ast.Assert) or (
                isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            return
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            scope.env[stmt.targets[0].id] = self.expr(stmt.value, scope)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple):
            value = simplify(self.expr(stmt.value, scope))  # `ok, reason = supported()`
            names = stmt.targets[0].elts
            if not (isinstance(value, ast.Tuple) and len(value.elts) == len(names)
                    and all(isinstance(n, ast.Name) for n in names)):
                raise Unfoldable("tuple unpacking")
            for target, element in zip(names, value.elts, strict=True):
                assert isinstance(target, ast.Name)
                scope.env[target.id] = element
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            scope.env[stmt.target.id] = self.expr(stmt.value, scope)
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                found = self.tree.resolve_import(scope.path, stmt, alias.name)
                if found is not None:
                    scope.env[alias.asname or alias.name] = Ref(found)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._mutation(stmt.value, scope)
        else:
            raise Unfoldable(f"statement {ast.unparse(stmt)[:60]}")

    def _mutation(self, call: ast.Call, scope: Scope) -> None:
        """`local.append(x)` / `local.insert(i, x)` on a local list; other calls (logging) are
        side effects the value does not depend on."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id in scope.env and func.attr in ("append", "insert", "extend")):
            return
        current = scope.env[func.value.id]
        if not isinstance(current, ast.List):
            raise Unfoldable(f"{func.attr} on a non-list")
        items = list(current.elts)
        values = [self.expr(a, scope) for a in call.args]
        if func.attr == "append":
            items.append(values[0])
        elif func.attr == "extend" and isinstance(values[0], ast.List | ast.Tuple):
            items.extend(values[0].elts)
        elif func.attr == "insert" and isinstance(values[0], ast.Constant) and isinstance(values[0].value, int):
            items.insert(int(values[0].value), values[1])
        else:
            raise Unfoldable(f"{func.attr} not foldable")
        scope.env[func.value.id] = ast.List(items, ast.Load())
