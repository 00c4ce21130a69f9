"""Feature gates of a release: flag combinations it refuses before loading the model.

A gate is a `raise` (or `_raise_unsupported_error`) in `EngineArgs` (`engine/arg_utils.py`) or in a
config dataclass's validation (`config/*.py`: `__post_init__`, `_validate*`, `_verify*`) whose
path condition - the enclosing `if` tests, negated for `else` branches - reads only the object's
own fields and constants, each field being a `vllm serve` flag. The condition is stored with each
field written as the flag's `dest` (`max_num_partial_prefills != 1`), together with the flags'
static defaults, so it can be evaluated on a stack's arguments. Conditions that read anything else
(the model, the platform, a local computation) are not gates the arguments alone decide, and are
left out.

Also here: how `--performance-mode` scales the scheduler's batch defaults
(`EngineArgs._set_default_max_num_seqs_and_batched_tokens_args`).
"""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.fold_ast import Scope, Unfoldable, simplify
from tools.vllm_release.predicates import Folder
from tools.vllm_release.source_tree import SourceTree, Symbol, literal_str, message_template

ARG_UTILS = "vllm/engine/arg_utils.py"
CONFIG_PACKAGE = "vllm/config/"
ENGINE_ARGS_METHODS = ("_check_feature_supported", "__post_init__")
# Functions checking the parsed namespace (`args.X`) before the engine is built: "Quick checks for
# model serve args that raise prior to loading" (TypeError), and the serve command's own.
ARGS_CHECKS = (("vllm/entrypoints/openai/cli_args.py", None, "validate_parsed_serve_args"),
               ("vllm/entrypoints/launchers/cli_args.py", None, "validate_parsed_serve_args"),  # v0.29-v0.32
               ("vllm/entrypoints/common/cli_args.py", None, "validate_parsed_serve_args"),
               ("vllm/entrypoints/cli/serve.py", "ServeSubcommand", "cmd"))
VALIDATOR_PREFIXES = ("__post_init__", "_validate", "_verify", "validate", "verify")
ALLOWED = (ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.Compare, ast.Eq, ast.NotEq,
           ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.Name, ast.Load,
           ast.Constant, ast.Tuple, ast.List, ast.BinOp, ast.Mod, ast.Mult, ast.Add, ast.Sub)
UNSUPPORTED_CALL = "_raise_unsupported_error"
SERVE_NAMESPACE = {"subparser": "serve"}
"""What the parsed namespace holds for `vllm serve` beyond its flags: `validate_parsed_serve_args`
returns early for another subcommand (`if hasattr(args, "subparser") and args.subparser != "serve"`)."""
DEFAULTS_FROM = (("vllm/entrypoints/openai/cli_args.py", "FrontendArgs"),
                 ("vllm/entrypoints/common/cli_args.py", "FrontendArgs"),
                 (ARG_UTILS, "AsyncEngineArgs"))


def extract_gates(tree: SourceTree, flags: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """Gates over the flags `flags` (the registry's `flags` section: name -> record)."""
    if not tree.has(ARG_UTILS):
        problems.append("gates: engine/arg_utils.py not found")
        return {"gates": [], "performance_mode": None}
    by_dest = {f["dest"]: name for name, f in flags.items() if f.get("dest")}
    by_field = {f["field"].split(":", 1)[1]: name for name, f in flags.items() if f.get("field")}
    folder = Folder(tree, frozenset(), frozenset(), None)
    engine_args = tree.resolve(ARG_UTILS, "EngineArgs")
    gates: list[dict[str, Any]] = []
    if engine_args is not None and isinstance(engine_args.node, ast.ClassDef):
        for method in ENGINE_ARGS_METHODS:
            gates += _class_gates(folder, engine_args, [method], lambda field: by_dest.get(field))
    for path in tree.paths_under(CONFIG_PACKAGE):
        for cls in (n for n in tree.parse(path).body if isinstance(n, ast.ClassDef)):
            symbol = Symbol("class", path, cls.name, cls)
            methods = [m.name for m in cls.body
                       if isinstance(m, ast.FunctionDef) and m.name.startswith(VALIDATOR_PREFIXES)]
            gates += _class_gates(folder, symbol, methods, lambda field, c=cls.name: by_field.get(f"{c}.{field}"))
    for path, owner, name in ARGS_CHECKS:
        func = _function(tree, path, owner, name)
        if func is not None:
            _walk(folder, Symbol("module", path, path, None), func.body, [], gates,
                  f"{path} {owner + '.' if owner else ''}{name}", lambda field: by_dest.get(field), "args")
    defaults: dict[str, Any] = {}
    for path, name in DEFAULTS_FROM:  # the namespace's defaults: the frontend's, then the engine's
        found = tree.resolve(path, name) if tree.has(path) else None
        if found is not None and isinstance(found.node, ast.ClassDef):
            defaults.update(_engine_defaults(folder, found))
    for gate in gates:  # static defaults only: a flag missing here has none (its value is unknown unset)
        # a config field gets what EngineArgs passes it: the default of the flag's dest, not of a field of
        # that name (v0.10.2 DecodingConfig.backend <- EngineArgs.guided_decoding_backend)
        dests = {key: flags[name].get("dest") for key, name in gate["flags"].items()}
        gate["defaults"] = {key: defaults[dest] for key, dest in dests.items() if dest in defaults}
    unique = {(g["when"], g["source"]): g for g in gates}
    return {"gates": sorted(unique.values(), key=lambda g: (g["source"], g["when"])),
            "performance_mode": _performance_mode(tree, problems)}


def _function(tree: SourceTree, path: str, owner: str | None, name: str) -> ast.FunctionDef | None:
    if not tree.has(path):
        return None
    body = tree.parse(path).body
    if owner is not None:
        cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == owner), None)
        body = cls.body if cls is not None else []
    return next((n for n in body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _class_gates(folder: Folder, cls: Symbol, methods: list[str], flag_of: Any) -> list[dict[str, Any]]:
    assert isinstance(cls.node, ast.ClassDef)
    found: list[dict[str, Any]] = []
    for name in methods:
        method = next((m for m in cls.node.body if isinstance(m, ast.FunctionDef) and m.name == name), None)
        if method is not None:
            _walk(folder, cls, method.body, [], found, f"{cls.path} {cls.name}.{name}", flag_of)
    return found


def _walk(folder: Folder, cls: Symbol, body: list[ast.stmt], path: list[ast.expr], found: list[dict[str, Any]],
          source: str, flag_of: Any, receiver: str = "self", assigned: set[str] | None = None) -> None:
    """`assigned`: the receiver's fields the function has written before this point (in any branch);
    a test reading one compares the function's own value, not the flag's, so it is no gate."""
    assigned = set() if assigned is None else assigned
    for stmt in body:
        if isinstance(stmt, ast.If):
            before = set(assigned)
            _walk(folder, cls, stmt.body, [*path, stmt.test], found, source, flag_of, receiver, assigned)
            _walk(folder, cls, stmt.orelse, [*path, ast.UnaryOp(ast.Not(), stmt.test)], found, source, flag_of,
                  receiver, before)
            assigned |= before
            # `if X: return` - what follows runs only when X is false (v0.30 MambaConfig.validate_ssu_algorithm
            # returns when no algorithm is set). An `if X: raise` needs no such term: leaving it out only
            # lets a later gate refuse what vLLM refuses anyway.
            if _returns(stmt.body):
                path = [*path, ast.UnaryOp(ast.Not(), stmt.test)]
            if _returns(stmt.orelse):
                path = [*path, stmt.test]
        elif isinstance(stmt, ast.For | ast.While | ast.With | ast.Try):
            return  # a loop or handler changes what the condition means: stop reading this path
        elif path and (_raised(stmt) is not None):
            gate = _gate(folder, cls, path, stmt, source, flag_of, receiver, assigned)
            if gate is not None:
                found.append(gate)
        else:
            assigned |= _written_fields(stmt, receiver)


def _returns(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return)


def _written_fields(stmt: ast.stmt, receiver: str) -> set[str]:
    """`receiver.X = ...`, `receiver.X += ...`, `receiver.X: T = ...` anywhere in `stmt`."""
    targets: list[ast.expr] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Assign):
            targets += node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets.append(node.target)
    return {t.attr for target in targets for t in ast.walk(target)
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == receiver}


def _raised(stmt: ast.stmt) -> tuple[str, ast.expr | None] | None:
    if isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call) and isinstance(stmt.exc.func, ast.Name):
        return stmt.exc.func.id, stmt.exc.args[0] if stmt.exc.args else None
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
            and stmt.value.func.id == UNSUPPORTED_CALL):
        feature = next((k.value for k in stmt.value.keywords if k.arg == "feature_name"),
                       stmt.value.args[0] if stmt.value.args else None)
        return "NotImplementedError", feature
    return None


def _gate(folder: Folder, cls: Symbol, path: list[ast.expr], stmt: ast.stmt, source: str,
          flag_of: Any, receiver: str, assigned: set[str]) -> dict[str, Any] | None:
    raised = _raised(stmt)
    assert raised is not None
    exception, message = raised
    flags: dict[str, str] = {}
    try:
        terms = [_rewrite(folder, cls, test, flags, flag_of, receiver) for test in path]
    except Unfoldable:
        return None
    if assigned & set(flags):
        return None  # e.g. v0.30 ParallelConfig: elastic_ep_max_dp_size is replaced before it is compared
    condition = simplify(ast.BoolOp(ast.And(), terms) if len(terms) > 1 else terms[0])
    if not flags or isinstance(condition, ast.Constant):
        return None
    text = message_template(message) if message is not None else ""
    if stmt_is_unsupported(stmt):
        text = f"{text} is not supported. We recommend to remove {text} from your config."
    return {"when": ast.unparse(condition), "flags": dict(sorted(flags.items())), "exception": exception,
            "message": text, "source": source}


def stmt_is_unsupported(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr)


def _rewrite(folder: Folder, cls: Symbol, node: ast.expr, flags: dict[str, str], flag_of: Any,
             receiver: str) -> ast.expr:
    """The test with `self.<field>` (`args.<dest>`) as the flag's dest and class constants folded;
    anything else (calls, locals, other objects) makes it no gate."""
    called = _attribute_call(node, receiver) if receiver == "args" else None
    if called is not None:
        function, name = called
        if function == "hasattr":
            if name in SERVE_NAMESPACE or flag_of(name) is not None:  # argparse sets every dest
                return ast.Constant(True)
            raise Unfoldable(f"hasattr(args, {name!r})")
        node = ast.Attribute(ast.Name(receiver, ast.Load()), name, ast.Load())  # getattr: the dest is set
    if receiver == "args" and isinstance(node, ast.Attribute) and node.attr in SERVE_NAMESPACE \
            and isinstance(node.value, ast.Name) and node.value.id == receiver:
        return ast.Constant(SERVE_NAMESPACE[node.attr])
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver:
        flag = flag_of(node.attr)
        if flag is None:
            raise Unfoldable(f"{receiver}.{node.attr} is not a flag")
        flags[node.attr] = flag
        return ast.Name(node.attr, ast.Load())
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and cls.kind == "class":
        owner = folder.tree.resolve(cls.path, node.value.id)
        value = folder.class_value(owner, node.attr) if owner is not None and owner.kind == "class" else None
        if isinstance(value, ast.Constant):
            return value
        raise Unfoldable(ast.unparse(node))
    if isinstance(node, ast.Name):
        if node.id in ("True", "False", "None"):
            return ast.Constant({"True": True, "False": False, "None": None}[node.id])
        raise Unfoldable(node.id)
    if not isinstance(node, ALLOWED):
        raise Unfoldable(type(node).__name__)
    rebuilt = ast.fix_missing_locations(
        _map_children(node, lambda c: _rewrite(folder, cls, c, flags, flag_of, receiver)))
    return rebuilt


def _attribute_call(node: ast.expr, receiver: str) -> tuple[str, str] | None:
    """("getattr", name) for `getattr(args, "name"[, default])`, ("hasattr", name) for `hasattr(args, "name")`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords):
        return None
    function = node.func.id
    if function not in ("getattr", "hasattr") or len(node.args) not in ((2, 3) if function == "getattr" else (2,)):
        return None
    owner, name = node.args[0], node.args[1]
    if isinstance(owner, ast.Name) and owner.id == receiver and isinstance(name, ast.Constant) \
            and isinstance(name.value, str):
        return function, name.value
    return None


def _map_children(node: ast.expr, fn: Any) -> ast.expr:
    if isinstance(node, ast.BoolOp):
        return ast.BoolOp(node.op, [fn(v) for v in node.values])
    if isinstance(node, ast.UnaryOp):
        return ast.UnaryOp(node.op, fn(node.operand))
    if isinstance(node, ast.Compare):
        return ast.Compare(fn(node.left), node.ops, [fn(c) for c in node.comparators])
    if isinstance(node, ast.BinOp):
        return ast.BinOp(fn(node.left), node.op, fn(node.right))
    if isinstance(node, ast.Tuple | ast.List):
        return type(node)([fn(e) for e in node.elts], ast.Load())
    return node


def _engine_defaults(folder: Folder, cls: Symbol) -> dict[str, Any]:
    """The class's (and its bases') field defaults that are constants (or other classes' constant
    defaults), nearest class first."""
    assert isinstance(cls.node, ast.ClassDef)
    defaults: dict[str, Any] = {}
    for owner in folder.tree.mro(cls.path, cls.node):
        assert isinstance(owner.node, ast.ClassDef)
        for stmt in owner.node.body:
            if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None
                    and stmt.target.id not in defaults):
                try:
                    value = simplify(folder.expr(stmt.value, Scope(owner.path, owner, {}, {})))
                except Unfoldable:
                    continue
                if isinstance(value, ast.Constant):
                    defaults[stmt.target.id] = value.value
    return defaults


def _performance_mode(tree: SourceTree, problems: list[str]) -> dict[str, dict[str, int]] | None:
    """`if self.performance_mode == "throughput": ... self.max_num_batched_tokens *= 2`: per mode,
    the factor each batch default is multiplied by (only defaults the stack leaves unset)."""
    engine_args = tree.resolve(ARG_UTILS, "EngineArgs")
    if engine_args is None or not isinstance(engine_args.node, ast.ClassDef):
        return None
    method = next((m for m in engine_args.node.body if isinstance(m, ast.FunctionDef)
                   and m.name == "_set_default_max_num_seqs_and_batched_tokens_args"), None)
    if method is None:
        problems.append("gates: batch defaults method not found")
        return None
    modes: dict[str, dict[str, int]] = {}
    for node in ast.walk(method):
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and ast.unparse(node.test.left) == "self.performance_mode"):
            mode = literal_str(node.test.comparators[0])
            for inner in ast.walk(node):
                if (mode and isinstance(inner, ast.AugAssign) and isinstance(inner.op, ast.Mult)
                        and isinstance(inner.value, ast.Constant) and isinstance(inner.value.value, int)
                        and isinstance(inner.target, ast.Attribute)):
                    modes.setdefault(mode, {})[inner.target.attr] = inner.value.value
    return modes
