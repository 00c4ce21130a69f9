"""Read one vLLM release's `vllm/` Python sources (from its wheel or an unpacked tree) as ASTs.

Nothing here imports vLLM: every fact is read by parsing the source, so the generator runs on a
machine without torch or CUDA. Symbols are resolved the way Python would find them statically:
module-level definitions, `from x import y` (relative too), and package `__init__` re-exports.
"""

from __future__ import annotations

import ast
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SymbolKind = Literal["class", "function", "value", "module"]


@dataclass(frozen=True)
class Symbol:
    """A name found in the tree: where it is defined and the node defining it."""

    kind: SymbolKind
    path: str
    name: str
    node: ast.AST | None  # ClassDef, FunctionDef, the assigned expression, or None for a module


def _is_any(node: ast.AST) -> bool:
    # `X = Any` is vLLM's runtime stand-in for a TYPE_CHECKING-only import; the import is the truth
    return isinstance(node, ast.Name) and node.id == "Any"


class SourceTree:
    """The `vllm/**/*.py` files of one release, keyed by their path inside the wheel."""

    def __init__(self, texts: dict[str, bytes]) -> None:
        self._texts = texts
        self._asts: dict[str, ast.Module] = {}
        self._defs: dict[str, dict[str, list[ast.AST]]] = {}

    @classmethod
    def from_wheel(cls, wheel: Path) -> SourceTree:
        with zipfile.ZipFile(wheel) as zf:
            names = [n for n in zf.namelist() if n.startswith("vllm/") and n.endswith(".py")]
            return cls({n: zf.read(n) for n in names})

    @classmethod
    def from_dir(cls, root: Path) -> SourceTree:
        """`root` holds the `vllm/` package directory (as an unzipped wheel does)."""
        return cls({p.relative_to(root).as_posix(): p.read_bytes() for p in (root / "vllm").rglob("*.py")})

    def has(self, path: str) -> bool:
        return path in self._texts

    def paths_under(self, prefix: str) -> list[str]:
        return sorted(p for p in self._texts if p.startswith(prefix))

    def contains(self, path: str, needle: str) -> bool:
        return needle.encode() in self._texts[path]

    def text(self, path: str) -> str:
        return self._texts[path].decode("utf-8")

    def parse(self, path: str) -> ast.Module:
        if path not in self._asts:
            self._asts[path] = ast.parse(self._texts[path], filename=path)
        return self._asts[path]

    def module_path(self, dotted: str) -> str | None:
        base = dotted.replace(".", "/")
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            if candidate in self._texts:
                return candidate
        return None

    def dotted(self, path: str) -> str:
        return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")

    def import_base(self, path: str, node: ast.ImportFrom) -> str:
        """The absolute module a `from ... import` statement in `path` names."""
        if not node.level:
            return node.module or ""
        package = self.dotted(path).split(".")
        if not path.endswith("__init__.py"):
            package = package[:-1]
        package = package[: len(package) - (node.level - 1)]
        return ".".join([*package, node.module] if node.module else package)

    # -- definitions -------------------------------------------------------------------------

    def _top_level(self, path: str) -> dict[str, list[ast.AST]]:
        if path not in self._defs:
            defs: dict[str, list[ast.AST]] = {}
            for stmt in _flatten_blocks(self.parse(path).body):
                for name, node in _bindings(stmt):
                    defs.setdefault(name, []).append(node)
            self._defs[path] = defs
        return self._defs[path]

    def resolve(self, path: str, name: str, _depth: int = 0) -> Symbol | None:
        """What `name` means at module level in `path` (following imports), or None."""
        if _depth > 12:
            return None
        candidates = self._top_level(path).get(name, [])
        preferred = [c for c in candidates if not _is_any(c)] or candidates
        for node in preferred:
            found = self._symbol(path, name, node, _depth)
            if found is not None:
                return found
        # a package's submodule is reachable as an attribute of the package
        if path.endswith("__init__.py"):
            sub = self.module_path(f"{self.dotted(path)}.{name}")
            if sub is not None:
                return Symbol("module", sub, name, None)
        for star in self._star_imports(path):
            found = self.resolve(star, name, _depth + 1)
            if found is not None:
                return found
        return None

    def resolve_import(self, path: str, node: ast.ImportFrom, name: str, depth: int = 0) -> Symbol | None:
        base = self.import_base(path, node)
        sub = self.module_path(f"{base}.{name}")
        target = self.module_path(base)
        if target is not None:
            found = self.resolve(target, name, depth + 1)
            if found is not None:
                return found
        if sub is not None:
            return Symbol("module", sub, name, None)
        return None

    def _symbol(self, path: str, name: str, node: ast.AST, depth: int) -> Symbol | None:
        if isinstance(node, ast.ClassDef):
            return Symbol("class", path, name, node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return Symbol("function", path, name, node)
        if isinstance(node, ast.ImportFrom):
            original = next(a.name for a in node.names if (a.asname or a.name) == name)
            return self.resolve_import(path, node, original, depth)
        if isinstance(node, ast.Import):
            alias = next(a for a in node.names if (a.asname or a.name.split(".")[0]) == name)
            dotted = alias.name if alias.asname else alias.name.split(".")[0]
            target = self.module_path(dotted)
            return Symbol("module", target, name, None) if target else None
        return Symbol("value", path, name, node)

    def _star_imports(self, path: str) -> Iterator[str]:
        for stmt in _flatten_blocks(self.parse(path).body):
            if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
                target = self.module_path(self.import_base(path, stmt))
                if target is not None:
                    yield target

    def class_bases(self, path: str, node: ast.ClassDef) -> list[Symbol]:
        """The bases of a class that are defined in the tree (external ones are skipped)."""
        bases = []
        for base in node.bases:
            found = self.resolve_expr(path, base)
            if found is not None and found.kind == "class":
                bases.append(found)
        return bases

    def resolve_expr(self, path: str, node: ast.expr) -> Symbol | None:
        """A dotted name expression (`Name` or `mod.Name`) resolved to its definition."""
        if isinstance(node, ast.Name):
            return self.resolve(path, node.id)
        if isinstance(node, ast.Attribute):
            owner = self.resolve_expr(path, node.value)
            if owner is not None and owner.kind == "module":
                return self.resolve(owner.path, node.attr)
        if isinstance(node, ast.Subscript):  # Generic[T] and friends
            return self.resolve_expr(path, node.value)
        return None

    def mro(self, path: str, node: ast.ClassDef) -> list[Symbol]:
        """The class and its in-tree ancestors, nearest first (depth-first, like simple MROs)."""
        seen: list[Symbol] = [Symbol("class", path, node.name, node)]
        for base in self.class_bases(path, node):
            assert isinstance(base.node, ast.ClassDef)
            for ancestor in self.mro(base.path, base.node):
                if all(ancestor.node is not s.node for s in seen):
                    seen.append(ancestor)
        return seen


def _flatten_blocks(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module statements, descending into `if`/`try` blocks (TYPE_CHECKING imports live there)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from _flatten_blocks(stmt.body)
            yield from _flatten_blocks(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *[h.body for h in stmt.handlers]):
                yield from _flatten_blocks(block)


def _bindings(stmt: ast.stmt) -> Iterator[tuple[str, ast.AST]]:
    if isinstance(stmt, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        yield stmt.name, stmt
    elif isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                yield target.id, stmt.value
    elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value:
        yield stmt.target.id, stmt.value
    elif isinstance(stmt, ast.ImportFrom):
        for alias in stmt.names:
            if alias.name != "*":
                yield alias.asname or alias.name, stmt
    elif isinstance(stmt, ast.Import):
        for alias in stmt.names:
            yield alias.asname or alias.name.split(".")[0], stmt


def class_body_value(node: ast.ClassDef, name: str) -> ast.expr | None:
    """The expression assigned to a class attribute in the class body itself."""
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ):
            return stmt.value
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id == name
            and stmt.value is not None
        ):
            return stmt.value
    return None


def class_method(node: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return stmt
    return None


def literal_str(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def message_template(node: ast.expr) -> str:
    """A raised or reported message as a `str.format` template: an f-string's expressions become
    `{name}` fields (`self.` / `args.` dropped), a constant stays itself, anything else its source."""
    if isinstance(node, ast.JoinedStr):
        return "".join(f"{{{_field(ast.unparse(v.value))}}}" if isinstance(v, ast.FormattedValue)
                       else str(v.value) if isinstance(v, ast.Constant) else "" for v in node.values)
    text = literal_str(node)
    return text if text is not None else ast.unparse(node)


def _field(text: str) -> str:
    for receiver in ("self.", "args."):
        text = text.removeprefix(receiver)
    return text
