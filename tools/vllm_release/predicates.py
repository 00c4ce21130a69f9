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

Statements are folded by fold_bodies.BodyFolder, expressions here; fold_ast.py holds the nodes
and the constant folding both share.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from typing import Any

from tools.vllm_release.fold_ast import (
    CurrentPlatform,
    Ref,
    Scope,
    Unfoldable,
    constant_value,
    item,
    platform_capability,
    simplify,
    to_int,
)
from tools.vllm_release.fold_bodies import BodyFolder
from tools.vllm_release.source_tree import Symbol, class_body_value, class_method

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
# Module-level registries the wheel declares empty and only out-of-tree plugins fill (v0.34's
# `_KV_CACHE_DTYPE_HANDLERS`, config/cache.py: filled by `@register_kv_cache_dtype`, which no
# module of the wheel applies): read as empty, so `.get(key)` is None on vLLM's own image.
EMPTY_REGISTRIES = frozenset({"_KV_CACHE_DTYPE_HANDLERS"})
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
ALLOWED_METHODS = {"startswith", "endswith", "upper"}
# Inputs that are strings wherever a check reads them past its `is None` guard (`--kv-cache-dtype`).
STRING_INPUTS = frozenset({"kv_cache_dtype"})
ALLOWED_ATTRIBUTES = {"major", "minor"}


class Folder(BodyFolder):
    """Folds functions of one release; `inputs` are the names an expression may keep."""

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
                known, constant = constant_value(folded)
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
                return item(value, index.value)
            if isinstance(value, Ref) and value.symbol.kind == "class" and value.symbol.name in self.enum_names:
                return index  # `Mode[name]`: the member named so (members fold to their names)
            raise Unfoldable("subscript")
        if isinstance(node, ast.NamedExpr):  # `if size := helper(): ...` binds the name for the branch
            value = self.expr(node.value, scope)
            scope.env[node.target.id] = value
            return value
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
            return value if isinstance(value, Ref | CurrentPlatform) else copy.deepcopy(value)
        if name in self.inputs:
            return ast.Name(name, ast.Load())
        if name in ("True", "False", "None"):
            return ast.Constant({"True": True, "False": False, "None": None}[name])
        if name == "current_platform":
            return CurrentPlatform()
        found = self.tree.resolve(scope.path, name)
        if found is None:
            return ast.Name(name, ast.Load())  # an external name (torch, ...): attributes may fold
        if found.kind == "value" and isinstance(found.node, ast.expr):
            if isinstance(found.node, ast.Constant | ast.List | ast.Tuple | ast.Set):
                return self.expr(found.node, Scope(found.path, None, {}, {}))
            if name in ASSUMED_VALUES:
                self.assumed_used.add(name)
                return ast.Constant(ASSUMED_VALUES[name])
            if name in EMPTY_REGISTRIES and isinstance(found.node, ast.Dict) and not found.node.keys:
                self.assumed_used.add(name)
                return ast.Dict([], [])
            raise Unfoldable(f"module value {name}")
        return Ref(found)

    def _attribute(self, owner: ast.expr, attr: str) -> ast.expr:
        if isinstance(owner, ast.Name) and owner.id == "torch":
            return ast.Constant(TORCH_ALIASES.get(attr, attr))
        if isinstance(owner, ast.Name) and owner.id in self.inputs and attr in ALLOWED_ATTRIBUTES:
            return ast.Attribute(owner, attr, ast.Load())
        if isinstance(owner, CurrentPlatform):
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
            if isinstance(owner, CurrentPlatform) and func.attr in PLATFORM_CONSTANTS:
                return ast.Constant(PLATFORM_CONSTANTS[func.attr])
            if isinstance(owner, CurrentPlatform):
                capability = platform_capability(func.attr, args)
                if capability is not None:
                    return capability
            if isinstance(owner, ast.Name | ast.Attribute) and func.attr in ALLOWED_METHODS:
                return ast.Call(ast.Attribute(owner, func.attr, ast.Load()), args, [])
            if isinstance(owner, ast.Name) and owner.id == "device_capability" and func.attr == "to_int":
                return to_int(owner)
            if isinstance(owner, ast.Dict) and not owner.keys and func.attr == "get":  # an EMPTY_REGISTRIES one
                return args[1] if len(args) > 1 else ast.Constant(None)
            callee = self._attribute(owner, func.attr)
        else:
            callee = self.expr(func, scope)
        if isinstance(callee, Ref) and callee.symbol.kind == "class" and callee.symbol.name == "DeviceCapability":
            return ast.Tuple(args, ast.Load())
        if isinstance(callee, Ref) and callee.symbol.kind == "class" and callee.symbol.name == "MultipleOf":
            # an entry of a block-size list (attention_checks._block_size_when); text() refuses it elsewhere
            return ast.Call(ast.Name("MultipleOf", ast.Load()), args, [])
        if isinstance(callee, Ref) and callee.symbol.kind == "function":
            return self.call(callee.symbol, args, kwargs, callee.bound or scope.bound)
        if isinstance(callee, ast.Name) and callee.id == "isinstance" and len(args) == 2 \
                and isinstance(args[0], ast.Name) and args[0].id in STRING_INPUTS \
                and isinstance(args[1], ast.Name) and args[1].id == "str":
            return ast.Constant(True)
        if isinstance(callee, ast.Name) and callee.id in ("len", "isinstance", "getattr", "hasattr"):
            raise Unfoldable(f"{callee.id}()")
        raise Unfoldable(f"call {ast.unparse(node)[:60]}")
