"""Field annotations of vLLM's config dataclasses, and the argparse kwargs vLLM derives from them.

vLLM builds most `vllm serve` flags with `get_kwargs(ConfigClass)` (vllm/engine/arg_utils.py
`_compute_kwargs`): the field's type hint decides the argparse `type`, `choices`, `nargs` and
`action`. This module replays that decision on the *annotation source*, following the release's own
variant of the rules (read from its `_compute_kwargs`, see `KwargsRules.read`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Literal

from tools.vllm_release.source_tree import SourceTree

HintKind = Literal["builtin", "generic", "literal", "class", "none", "other", "union", "ellipsis"]
_BUILTINS = {"int", "str", "float", "bool", "bytes", "dict", "list", "tuple", "set", "frozenset",
             "type", "object", "complex"}
_GENERIC_ALIASES = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set", "Type": "type"}
_TRANSPARENT = {"Annotated", "SkipValidation", "Required", "NotRequired", "Final"}
_NOT_FIELDS = {"ClassVar", "InitVar", "KW_ONLY"}


@dataclass(frozen=True)
class Hint:
    kind: HintKind
    name: str = ""
    args: tuple[Hint, ...] = ()
    values: tuple[Any, ...] = ()
    dataclass: bool = False
    dict_subclass: bool = False

    @property
    def builtin(self) -> str | None:
        return self.name if self.kind in ("builtin", "generic") else None


@dataclass(frozen=True)
class TypeFn:
    """A symbolic argparse `type=` callable: what values it accepts."""

    name: str  # "str" | "int" | "float" | "bool" | "json"
    human_readable: bool = False  # accepts 1k / 2M / 1G (and "auto" for max_model_len)


@dataclass(frozen=True)
class KwargsRules:
    """The parts of `_compute_kwargs` that differ between releases."""

    pep604_unions: bool = True  # `X | Y` flattened like `Union[X, Y]`
    human_readable: frozenset[str] = frozenset()
    optional_str_bool: bool = False  # `bool | str | None` -> optional-valued flag
    dict_subclass_as_dict: bool = False
    set_collections: bool = True

    @classmethod
    def read(cls, tree: SourceTree, path: str) -> KwargsRules:
        module = tree.parse(path)
        funcs = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
        compute = funcs.get("_compute_kwargs") or funcs.get("get_kwargs")
        if compute is None:
            return cls()
        text = ast.unparse(compute)
        hints_fn = funcs.get("get_type_hints")
        return cls(
            pep604_unions=hints_fn is None or "UnionType" in ast.unparse(hints_fn),
            human_readable=frozenset(_human_readable_fields(compute)),
            optional_str_bool="type_hints == {bool, str, type(None)}" in text,
            dict_subclass_as_dict="is_dict_subclass" in text,
            set_collections="contains_type(type_hints, set)" in text,
        )


def _human_readable_fields(compute: ast.FunctionDef) -> set[str]:
    """Field names compared against `name` in a branch that assigns a `human_readable_*` type."""
    local_sets: dict[str, set[str]] = {}
    for node in ast.walk(compute):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Set | ast.Tuple | ast.List):
            names = {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
            for target in node.targets:
                if isinstance(target, ast.Name):
                    local_sets[target.id] = {str(n) for n in names}
    found: set[str] = set()
    for node in ast.walk(compute):
        if not isinstance(node, ast.If) or "human_readable" not in ast.unparse(node.body[0]):
            continue
        test = node.test
        if isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "name":
            right = test.comparators[0]
            if isinstance(right, ast.Constant):
                found.add(str(right.value))
            elif isinstance(right, ast.Set | ast.Tuple | ast.List):
                found |= {str(e.value) for e in right.elts if isinstance(e, ast.Constant)}
            elif isinstance(right, ast.Name):
                found |= local_sets.get(right.id, set())
    return found


@dataclass
class FieldInfo:
    name: str
    annotation: ast.expr
    path: str  # file defining the field
    owner: str  # class defining the field


@dataclass
class HintReader:
    tree: SourceTree
    rules: KwargsRules
    _class_cache: dict[int, tuple[bool, bool]] = field(default_factory=dict)

    def fields(self, path: str, node: ast.ClassDef) -> list[FieldInfo]:
        """Dataclass fields in `dataclasses.fields` order: inherited first, overrides in place."""
        ordered: dict[str, FieldInfo] = {}
        for owner in reversed(self.tree.mro(path, node)):
            assert isinstance(owner.node, ast.ClassDef)
            for stmt in owner.node.body:
                if (
                    isinstance(stmt, ast.AnnAssign)
                    and isinstance(stmt.target, ast.Name)
                    and _head(stmt.annotation) not in _NOT_FIELDS
                ):
                    name = stmt.target.id
                    ordered[name] = FieldInfo(name, stmt.annotation, owner.path, owner.name)
        return list(ordered.values())

    def hints(self, path: str, node: ast.expr, depth: int = 0) -> list[Hint]:
        """`get_type_hints` of vLLM's arg_utils: the flattened members of unions/Annotated."""
        if depth > 20:
            return [Hint("other", "?")]
        if isinstance(node, ast.Constant):
            if node.value is None:
                return [Hint("none")]
            if node.value is Ellipsis:
                return [Hint("ellipsis")]
            if isinstance(node.value, str):  # a forward reference
                return self.hints(path, ast.parse(node.value, mode="eval").body, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            members = self.hints(path, node.left, depth + 1) + self.hints(path, node.right, depth + 1)
            return _unique(members) if self.rules.pep604_unions else [Hint("other", "UnionType")]
        if isinstance(node, ast.Subscript):
            return self._subscript(path, node, depth)
        if isinstance(node, ast.Name | ast.Attribute):
            return self._named(path, node, depth)
        return [Hint("other", ast.unparse(node))]

    def one(self, path: str, node: ast.expr, depth: int = 0) -> Hint:
        members = self.hints(path, node, depth)
        return members[0] if len(members) == 1 else Hint("union", args=tuple(members))

    def _named(self, path: str, node: ast.Name | ast.Attribute, depth: int) -> list[Hint]:
        name = node.id if isinstance(node, ast.Name) else node.attr
        symbol = self.tree.resolve_expr(path, node)
        if symbol is None:
            if name in _BUILTINS:
                return [Hint("builtin", name)]
            if name in _GENERIC_ALIASES:
                return [Hint("builtin", _GENERIC_ALIASES[name])]
            return [Hint("none")] if name == "NoneType" else [Hint("other", name)]
        if symbol.kind == "class":
            assert isinstance(symbol.node, ast.ClassDef)
            is_dc, is_dict = self._class_traits(symbol.path, symbol.node)
            return [Hint("class", symbol.name, dataclass=is_dc, dict_subclass=is_dict)]
        if symbol.kind == "value" and isinstance(symbol.node, ast.expr):
            value = symbol.node
            if isinstance(value, ast.Call) and _head(value.func) in {"TypeVar", "NewType"}:
                return [Hint("other", name)]
            return self.hints(symbol.path, value, depth + 1)
        return [Hint("other", name)]

    def _subscript(self, path: str, node: ast.Subscript, depth: int) -> list[Hint]:
        head = _head(node.value)
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in _TRANSPARENT:
            return self.hints(path, items[0], depth + 1)
        if head == "Optional":
            return _unique(self.hints(path, items[0], depth + 1) + [Hint("none")])
        if head == "Union":
            members: list[Hint] = []
            for item in items:
                members += self.hints(path, item, depth + 1)
            return _unique(members)
        if head == "Literal":
            values: list[Any] = []
            for item in items:
                if isinstance(item, ast.Constant):
                    values.append(item.value)
                else:  # nested Literal aliases flatten, as typing does
                    for nested in self.hints(path, item, depth + 1):
                        values.extend(nested.values)
            return [Hint("literal", values=tuple(dict.fromkeys(values)))]
        base = _GENERIC_ALIASES.get(head, head)
        if base in _BUILTINS:
            return [Hint("generic", base, args=tuple(self.one(path, i, depth + 1) for i in items))]
        return self.hints(path, node.value, depth + 1)  # a user generic: its origin decides

    def _class_traits(self, path: str, node: ast.ClassDef) -> tuple[bool, bool]:
        key = id(node)
        if key not in self._class_cache:
            is_dc = any(_head(d) in {"dataclass", "config"} for d in node.decorator_list)
            is_dict = any(_head(b) in {"dict", "Dict"} for b in node.bases)
            for base in self.tree.class_bases(path, node):
                assert isinstance(base.node, ast.ClassDef)
                base_dc, base_dict = self._class_traits(base.path, base.node)
                is_dc, is_dict = is_dc or base_dc, is_dict or base_dict
            self._class_cache[key] = (is_dc, is_dict)
        return self._class_cache[key]

    def field_kwargs(self, info: FieldInfo) -> dict[str, Any]:
        """The argparse kwargs `_compute_kwargs` gives this field (symbolic `type`)."""
        hints = self.hints(info.path, info.annotation)
        if self.rules.dict_subclass_as_dict:
            hints = [Hint("builtin", "dict") if h.dict_subclass else h for h in hints]
        kwargs: dict[str, Any] = {"__field__": f"{info.path}:{info.owner}.{info.name}"}
        kinds = {h.builtin or h.kind for h in hints}
        non_builtin = any(h.kind in ("class", "other", "literal") for h in hints)
        if any(h.kind == "class" and h.dataclass for h in hints):
            kwargs["type"] = TypeFn("json")
        elif self.rules.optional_str_bool and kinds == {"bool", "str", "none"}:
            kwargs.update(type=TypeFn("str"), nargs="?", const=True)
        elif "bool" in kinds:
            kwargs["action"] = "BooleanOptionalAction"
        elif "literal" in kinds:
            kwargs.update(_literal_kwargs(next(h for h in hints if h.kind == "literal"), "str" in kinds))
        elif collection := next(
            (h for name in ("tuple", "list", "set") for h in hints
             if h.builtin == name and (name != "set" or self.rules.set_collections)),
            None,
        ):
            kwargs.update(_collection_kwargs(collection))
        elif "int" in kinds:
            kwargs["type"] = TypeFn("int", human_readable=info.name in self.rules.human_readable)
        elif "float" in kinds:
            kwargs["type"] = TypeFn("float")
        elif "dict" in kinds:
            kwargs["type"] = TypeFn("json")  # json.loads, or dict-or-str when str/classes are allowed
        elif "str" in kinds or non_builtin:
            kwargs["type"] = TypeFn("str")
        else:
            kwargs["type"] = TypeFn("str")
            kwargs["__unsupported__"] = True  # vLLM raises here; recorded, not guessed
        if "none" in kinds and "bool" not in kinds:
            kwargs["__optional__"] = True
        return kwargs


def _literal_kwargs(hint: Hint, free_text: bool) -> dict[str, Any]:
    options = list(hint.values)
    kind = type(options[0]).__name__ if options else "str"
    kwargs: dict[str, Any] = {"type": TypeFn(kind)}
    if not free_text:  # with `str` in the union vLLM shows the options as a metavar only
        kwargs["choices"] = sorted(options)
    return kwargs


def _collection_kwargs(hint: Hint) -> dict[str, Any]:
    elem = hint.args[0] if hint.args else Hint("builtin", "str")
    if elem.kind == "union":
        elem = Hint("builtin", "str")
    has_ellipsis = any(a.kind == "ellipsis" for a in hint.args)
    kwargs: dict[str, Any] = {
        "nargs": "+" if hint.name != "tuple" or has_ellipsis else len(hint.args)
    }
    if elem.kind == "literal":
        kwargs.update(_literal_kwargs(elem, False))
    elif elem.builtin in ("int", "float", "bool"):
        kwargs["type"] = TypeFn(elem.builtin or "str")
    else:
        kwargs["type"] = TypeFn("str")
    return kwargs


def _head(node: ast.expr) -> str:
    """The last name of a (possibly called or subscripted) dotted expression."""
    while isinstance(node, ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _unique(hints: list[Hint]) -> list[Hint]:
    return list(dict.fromkeys(hints))
