"""Fold a small vLLM function, as the release wrote it, into one expression over named inputs.

The attention backends answer "do you support X?" through class methods that return constants,
compare the compute capability, or call helpers that ask the platform (`current_platform`). This
module inlines those calls on the AST, for a CUDA platform, until one expression remains over the
inputs of `AttentionBackend.validate_configuration` (`head_size`, `dtype`, `kv_cache_dtype`,
`device_capability`, ...), e.g. `device_capability >= (7, 5) and device_capability <= (12, 1)`.
The registry stores that text; `vllm_serving/engine/expressions.py` evaluates it. Whatever
depends on more than the inputs (a build flag, a config object) makes the fold fail: the fact is
then left `null` and listed under `unextracted`, never guessed.

What the fold assumes about the machine is the table `ASSUMED` (a CUDA host with vLLM's own
wheels): each entry is a function whose answer is not in the configuration.
"""

from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tools.vllm_release.source_tree import SourceTree, Symbol, class_body_value, class_method

# Platform predicates on a CUDA host.
PLATFORM_CONSTANTS = {
    "is_cuda": True, "is_cuda_alike": True, "is_rocm": False, "is_xpu": False, "is_cpu": False,
    "is_tpu": False, "is_out_of_tree": False, "is_neuron": False, "is_hpu": False, "is_zen_cpu": False,
}
# Functions whose value is a property of the installation, not of the stack, with the value this
# project assumes (vLLM's own CUDA wheel and image, on a host that may reach NVIDIA's artifactory
# for FlashInfer's TRT-LLM cubins). Documented in tools/vllm_release/README.md.
ASSUMED: dict[str, Any] = {
    "has_nvidia_artifactory": True,
    "force_use_trtllm_attention": None,  # --attention-config.use_trtllm_attention unset
    "is_batch_invariant": False,  # VLLM_BATCH_INVARIANT unset
    "get_current_vllm_config_or_none": None,  # no --attention-config.flash_attn_version override
}
# Module-level values computed at import from the environment, with their value when it is unset.
ASSUMED_VALUES: dict[str, Any] = {"VLLM_BATCH_INVARIANT": False}
# Calls that stand for a value the registry models as an input of its own.
INPUT_CALLS = {"get_flash_attn_version": "fa_version"}
# torch dtype spellings -> the names the registry uses
TORCH_ALIASES = {"half": "float16", "float": "float32", "double": "float64"}
ALLOWED_NODES = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.Compare, ast.Eq,
    ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.Name,
    ast.Load, ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Attribute, ast.Call, ast.BinOp, ast.Mod,
    ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.IfExp, ast.Starred,
)
ALLOWED_METHODS = {"startswith", "endswith"}
ALLOWED_ATTRIBUTES = {"major", "minor"}
_MAX_DEPTH = 8


class Unfoldable(Exception):
    """The function depends on something other than the named inputs."""


class Ref(ast.expr):
    """A name that resolved to a definition in the tree (a class, a function or a module);
    `bound` is the class `cls` stands for, for methods reached through a class."""

    def __init__(self, symbol: Symbol, bound: Symbol | None = None) -> None:
        super().__init__()
        self.symbol = symbol
        self.bound = bound


class _Platform(ast.expr):
    """`current_platform`."""


@dataclass
class Folder:
    """Folds functions of one release; `inputs` are the names an expression may keep."""

    tree: SourceTree
    inputs: frozenset[str]
    enum_names: frozenset[str] = frozenset()  # enums whose members fold to their *name*
    platform: Symbol | None = None
    depth: int = 0
    assumed_used: set[str] = field(default_factory=set)
    _owners: dict[int, Symbol] = field(default_factory=dict)  # method node -> the class defining it

    # -- entry points ------------------------------------------------------------------------

    def method(self, cls: Symbol, name: str, args: Mapping[str, ast.expr]) -> ast.expr:
        """`cls.name(**args)` as one expression (the method found along `cls`'s MRO)."""
        found = self.find_method(cls, name)
        if found is None:
            raise Unfoldable(f"{cls.name}.{name} not found")
        return self.call(found, [], dict(args), cls)

    def text(self, expr: ast.expr) -> str:
        """The expression as the registry stores it, after checking it holds only inputs."""
        simple = simplify(expr)
        for node in ast.walk(simple):
            if not isinstance(node, ALLOWED_NODES):
                raise Unfoldable(f"unsupported {type(node).__name__} in {ast.unparse(simple)}")
            if isinstance(node, ast.Name) and node.id not in self.inputs:
                raise Unfoldable(f"{node.id} is not an input")
            if isinstance(node, ast.Attribute) and node.attr not in ALLOWED_ATTRIBUTES | ALLOWED_METHODS:
                raise Unfoldable(f".{node.attr} in {ast.unparse(simple)}")
            if isinstance(node, ast.Call) and not (
                    isinstance(node.func, ast.Attribute) and node.func.attr in ALLOWED_METHODS):
                raise Unfoldable(f"call {ast.unparse(node)}")
        return ast.unparse(simple)

    # -- functions ---------------------------------------------------------------------------

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
        for name, default in zip(kwonly, node.args.kw_defaults, strict=True):
            if default is not None:
                env[name] = default
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
        elif func.attr == "insert" and isinstance(values[0], ast.Constant):
            items.insert(int(values[0].value), values[1])
        else:
            raise Unfoldable(f"{func.attr} not foldable")
        scope.env[func.value.id] = ast.List(items, ast.Load())

    # -- expressions -------------------------------------------------------------------------

    def expr(self, node: ast.expr, scope: Scope) -> ast.expr:
        if isinstance(node, ast.Constant):
            return node
        if isinstance(node, ast.Name):
            return self._name(node.id, scope)
        if isinstance(node, ast.Attribute):
            return self._attribute(self.expr(node.value, scope), node.attr)
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            elts = [self._element(e, scope) for e in node.elts]
            flat: list[ast.expr] = []
            for e in elts:  # *[...] of a known list is spread in place
                if isinstance(e, ast.Starred) and isinstance(e.value, ast.List | ast.Tuple):
                    flat.extend(e.value.elts)
                else:
                    flat.append(e)
            return type(node)(flat, ast.Load()) if not isinstance(node, ast.Set) else ast.Set(flat)
        if isinstance(node, ast.BoolOp):
            values: list[ast.expr] = []
            for value in node.values:  # short-circuit as Python does: `x is not None and x.y`
                folded = simplify(self.expr(value, scope))
                known, constant = _const(folded)
                if known and bool(constant) == isinstance(node.op, ast.Or):
                    return ast.Constant(constant)
                values.append(folded)
            return simplify(ast.BoolOp(node.op, values))
        if isinstance(node, ast.UnaryOp):
            return ast.UnaryOp(node.op, self.expr(node.operand, scope))
        if isinstance(node, ast.Compare):
            return ast.Compare(self.expr(node.left, scope), node.ops, [self.expr(c, scope) for c in node.comparators])
        if isinstance(node, ast.BinOp):
            return ast.BinOp(self.expr(node.left, scope), node.op, self.expr(node.right, scope))
        if isinstance(node, ast.IfExp):
            return ast.IfExp(self.expr(node.test, scope), self.expr(node.body, scope), self.expr(node.orelse, scope))
        if isinstance(node, ast.Subscript):  # `supported()[0]` of a returned (ok, reason) tuple
            value, index = simplify(self.expr(node.value, scope)), simplify(self.expr(node.slice, scope))
            if isinstance(index, ast.Constant) and isinstance(index.value, int):
                return _item(value, index.value)
            raise Unfoldable("subscript")
        if isinstance(node, ast.JoinedStr):
            parts = [self.expr(v.value, scope) if isinstance(v, ast.FormattedValue) else v for v in node.values]
            if all(isinstance(p, ast.Constant) for p in parts):
                return ast.Constant("".join(str(p.value) for p in parts if isinstance(p, ast.Constant)))
            raise Unfoldable("f-string of inputs")
        raise Unfoldable(f"expression {type(node).__name__}")

    def _element(self, node: ast.expr, scope: Scope) -> ast.expr:
        if isinstance(node, ast.Starred):
            return ast.Starred(simplify(self.expr(node.value, scope)), ast.Load())
        return self.expr(node, scope)

    def _name(self, name: str, scope: Scope) -> ast.expr:
        if name in scope.env:
            value = scope.env[name]
            return value if isinstance(value, Ref | _Platform) else copy.deepcopy(value)
        if name in self.inputs:
            return ast.Name(name, ast.Load())
        if name in ("True", "False", "None"):
            return ast.Constant({"True": True, "False": False, "None": None}[name])
        if name == "current_platform":
            return _Platform()
        found = self.tree.resolve(scope.path, name)
        if found is None:
            return ast.Name(name, ast.Load())  # an external name (torch, ...): attributes may fold
        if found.kind == "value" and isinstance(found.node, ast.expr):
            if isinstance(found.node, ast.Constant | ast.List | ast.Tuple | ast.Set):
                return self.expr(found.node, Scope(found.path, None, {}, {}))
            if name in ASSUMED_VALUES:
                self.assumed_used.add(name)
                return ast.Constant(ASSUMED_VALUES[name])
            raise Unfoldable(f"module value {name}")
        return Ref(found)

    def _attribute(self, owner: ast.expr, attr: str) -> ast.expr:
        if isinstance(owner, ast.Name) and owner.id == "torch":
            return ast.Constant(TORCH_ALIASES.get(attr, attr))
        if isinstance(owner, ast.Name) and owner.id in self.inputs and attr in ALLOWED_ATTRIBUTES:
            return ast.Attribute(owner, attr, ast.Load())
        if isinstance(owner, _Platform):
            if self.platform is None:
                raise Unfoldable("no CUDA platform class")
            return self._attribute(Ref(self.platform), attr)
        if isinstance(owner, Ref) and owner.symbol.kind == "module":
            found = self.tree.resolve(owner.symbol.path, attr)
            if found is None:
                raise Unfoldable(f"{owner.symbol.name}.{attr}")
            return Ref(found) if found.kind != "value" else self._name(attr, Scope(owner.symbol.path, None, {}, {}))
        if isinstance(owner, Ref) and owner.symbol.kind == "class":
            cls = owner.bound or owner.symbol
            if cls.name in self.enum_names or owner.symbol.name in self.enum_names:
                return ast.Constant(attr)
            method = self.find_method(cls, attr)
            if method is not None:
                return Ref(method, bound=cls)
            value = self.class_value(cls, attr)
            if value is not None:
                return value
            raise Unfoldable(f"{cls.name}.{attr}")
        raise Unfoldable(f"attribute .{attr} of {type(owner).__name__}")

    def class_value(self, cls: Symbol, attr: str) -> ast.expr | None:
        assert isinstance(cls.node, ast.ClassDef)
        for ancestor in self.tree.mro(cls.path, cls.node):
            assert isinstance(ancestor.node, ast.ClassDef)
            value = class_body_value(ancestor.node, attr)
            if value is not None:
                folded = self.expr(value, Scope(ancestor.path, cls, {}, {}))
                # an enum member (`X = "..."`, `X = enum.auto()`) read through its class: its value
                return folded
        return None

    def find_method(self, cls: Symbol, name: str, after: Symbol | None = None) -> Symbol | None:
        """The method along `cls`'s MRO (past the class `after`, for `super()`)."""
        assert isinstance(cls.node, ast.ClassDef)
        mro = self.tree.mro(cls.path, cls.node)
        if after is not None:
            index = next((i for i, c in enumerate(mro) if c.node is after.node), len(mro))
            mro = mro[index + 1:]
        for ancestor in mro:
            assert isinstance(ancestor.node, ast.ClassDef)
            found = class_method(ancestor.node, name)
            if found is not None:
                self._owners[id(found)] = ancestor
                return Symbol("function", ancestor.path, name, found)
        return None

    def _call(self, node: ast.Call, scope: Scope) -> ast.expr:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in INPUT_CALLS:
            return ast.Name(INPUT_CALLS[name], ast.Load())
        if name in ("Field", "field"):  # a dataclass field's declared default
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            if default is None:
                raise Unfoldable("field without a default")
            return self.expr(default, scope)
        if name in ASSUMED:
            self.assumed_used.add(name)
            return ast.Constant(ASSUMED[name])
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
            owner_cls, bound = scope.extra.get("owner"), scope.bound
            parent = self.find_method(bound, func.attr, after=owner_cls) if owner_cls and bound else None
            if parent is None:
                raise Unfoldable("super()")
            return self.call(parent, [self.expr(a, scope) for a in node.args],
                             {k.arg: self.expr(k.value, scope) for k in node.keywords if k.arg}, bound)
        args = [self.expr(a, scope) for a in node.args if not isinstance(a, ast.Starred)]
        kwargs = {k.arg: self.expr(k.value, scope) for k in node.keywords if k.arg is not None}
        if isinstance(func, ast.Attribute):
            owner = self.expr(func.value, scope)
            if isinstance(owner, _Platform) and func.attr in PLATFORM_CONSTANTS:
                return ast.Constant(PLATFORM_CONSTANTS[func.attr])
            if isinstance(owner, _Platform):
                capability = _platform_capability(func.attr, args)
                if capability is not None:
                    return capability
            if isinstance(owner, ast.Name | ast.Attribute) and func.attr in ALLOWED_METHODS:
                return ast.Call(ast.Attribute(owner, func.attr, ast.Load()), args, [])
            if isinstance(owner, ast.Name) and owner.id == "device_capability" and func.attr == "to_int":
                return _to_int(owner)
            callee = self._attribute(owner, func.attr)
        else:
            callee = self.expr(func, scope)
        if isinstance(callee, Ref) and callee.symbol.kind == "class" and callee.symbol.name == "DeviceCapability":
            return ast.Tuple(args, ast.Load())
        if isinstance(callee, Ref) and callee.symbol.kind == "function":
            return self.call(callee.symbol, args, kwargs, callee.bound or scope.bound)
        if isinstance(callee, ast.Name) and callee.id in ("len", "isinstance", "getattr", "hasattr"):
            raise Unfoldable(f"{callee.id}()")
        raise Unfoldable(f"call {ast.unparse(node)[:60]}")


@dataclass
class Scope:
    path: str
    bound: Symbol | None
    env: dict[str, ast.expr]
    extra: dict[str, Any]

    def copy(self) -> Scope:
        return Scope(self.path, self.bound, dict(self.env), dict(self.extra))


def _item(value: ast.expr, index: int) -> ast.expr:
    """`value[index]` of a folded tuple, through the branches of a conditional."""
    if isinstance(value, ast.Tuple | ast.List) and -len(value.elts) <= index < len(value.elts):
        return value.elts[index]
    if isinstance(value, ast.IfExp):
        return ast.IfExp(value.test, _item(value.body, index), _item(value.orelse, index))
    raise Unfoldable("subscript")


def _capability(major: int, minor: int) -> ast.Tuple:
    return ast.Tuple([ast.Constant(major), ast.Constant(minor)], ast.Load())


def _device() -> ast.Name:
    return ast.Name("device_capability", ast.Load())


def _to_int(cap: ast.expr) -> ast.expr:
    return ast.BinOp(ast.BinOp(ast.Attribute(cap, "major", ast.Load()), ast.Mult(), ast.Constant(10)),
                     ast.Add(), ast.Attribute(cap, "minor", ast.Load()))


def _platform_capability(method: str, args: list[ast.expr]) -> ast.expr | None:
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


def _const(node: ast.expr) -> tuple[bool, Any]:
    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, ast.Tuple | ast.List) and all(_const(e)[0] for e in node.elts):
        values = [_const(e)[1] for e in node.elts]
        return True, tuple(values) if isinstance(node, ast.Tuple) else values
    return False, None


def simplify(node: ast.expr) -> ast.expr:
    """Constant-fold what does not depend on an input (short-circuiting `and`/`or`)."""
    if isinstance(node, ast.BoolOp):
        values = [simplify(v) for v in node.values]
        kept: list[ast.expr] = []
        for value in values:
            known, constant = _const(value)
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
        known, constant = _const(operand)
        if known and isinstance(node.op, ast.Not):
            return ast.Constant(not constant)
        if known and isinstance(node.op, ast.USub):
            return ast.Constant(-constant)
        if isinstance(node.op, ast.Not) and isinstance(operand, ast.UnaryOp) and isinstance(operand.op, ast.Not):
            return operand.operand  # not not x: x (every test here is a bool)
        return ast.UnaryOp(node.op, operand)
    if isinstance(node, ast.Compare):
        left, rights = simplify(node.left), [simplify(c) for c in node.comparators]
        if len(rights) == 1 and all(_const(n)[0] for n in (left, rights[0])):
            return ast.Constant(bool(_COMPARES[type(node.ops[0])](_const(left)[1], _const(rights[0])[1])))
        return ast.Compare(left, node.ops, rights)
    if isinstance(node, ast.BinOp):
        left, right = simplify(node.left), simplify(node.right)
        if _const(left)[0] and _const(right)[0] and type(node.op) in _BINOPS:
            return ast.Constant(_BINOPS[type(node.op)](_const(left)[1], _const(right)[1]))
        return ast.BinOp(left, node.op, right)
    if isinstance(node, ast.IfExp):
        test = simplify(node.test)
        known, constant = _const(test)
        if known:
            return simplify(node.body if constant else node.orelse)
        body, orelse = simplify(node.body), simplify(node.orelse)
        if ast.dump(body) == ast.dump(orelse):
            return body
        if _const(body) == (True, True) and _const(orelse) == (True, False):  # `True if x else False`
            return test
        if _const(body) == (True, False) and _const(orelse) == (True, True):
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
