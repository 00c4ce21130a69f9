"""Speculative decoding in a release: the methods, which need a draft model, and what a draft
can be run for (paths inside the wheel).

- `config/speculative.py` `SpeculativeConfig`: the `method` field's `Literal`, the deprecated
  per-model MTP names folded into `mtp`, and the `if self.model is None` chain that says which
  methods draft without a separate model;
- `SpeculativeConfig.hf_config_override`: the model types (or architectures) an MTP draft is
  made from, each rewritten to its MTP variant, and the config key giving its layer count
  (`n_predict`): a model type absent here has no MTP draft ("Unsupported speculative method");
- `v1/spec_decode/` proposers: whether a separate draft model refuses a multimodal target
  (`_raise_if_multimodal`, NotImplementedError) or only warns;
- `SpeculativeConfig._verify_args`: the target models eagle3 can draft for (aux hidden states);
- `config/vllm.py` `VllmConfig.__post_init__`: the methods `--async-scheduling` accepts.
"""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.source_tree import SourceTree, class_method, literal_str
from tools.vllm_release.type_hints import HintReader, KwargsRules

SPECULATIVE_FILES = ["vllm/config/speculative.py", "vllm/config/__init__.py"]
SPEC_DECODE = "vllm/v1/spec_decode/"


def extract_speculative(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    for path in SPECULATIVE_FILES:
        found = tree.resolve(path, "SpeculativeConfig") if tree.has(path) else None
        if found is not None and isinstance(found.node, ast.ClassDef):
            return _speculative(tree, found.path, found.node, problems)
    problems.append("speculative: SpeculativeConfig not found")
    return {"source": None, "methods": {}}


def _speculative(tree: SourceTree, path: str, cls: ast.ClassDef, problems: list[str]) -> dict[str, Any]:
    reader = HintReader(tree, KwargsRules())
    method_field = next((f for f in reader.fields(path, cls) if f.name == "method"), None)
    methods: list[str] = []
    if method_field is not None:
        for hint in reader.hints(method_field.path, method_field.annotation):
            methods += [str(v) for v in hint.values]
    aliases: dict[str, str] = {}
    draft_free: dict[str, str] = {}
    chain_found = target_dependent = False
    for node in ast.walk(cls):
        if not isinstance(node, ast.If):
            continue
        target = _assigned_const(node.body, "method")
        if target is not None:
            for tested in _tested_methods(tree, reader, path, node.test):
                if tested != target and tested in methods:
                    aliases.setdefault(tested, target)
        if _mentions_model_is_none(node.test):
            for branch_test, body in _if_chain(node.body):
                model = _assigned(body, "model")
                if branch_test is None or model is None:
                    continue
                chain_found = True
                draft = "target_model" if isinstance(model, ast.Attribute) else "none"
                tested_methods = _tested_methods(tree, reader, path, branch_test)
                # a branch keyed on the target model (v0.10: MTP for deepseek_v3...) leaves
                # the other methods' need for a draft model to the checkpoint
                target_dependent = target_dependent or not tested_methods
                for tested in tested_methods:
                    draft_free.setdefault(tested, draft)
    if not chain_found:
        problems.append("speculative: which methods need a draft model is not statically readable")
    elif target_dependent:
        problems.append("speculative: whether a method needs a draft model depends on the target "
                        "model type for methods without their own branch")
    records: dict[str, Any] = {}
    for method in methods:
        canonical = aliases.get(method, method)
        known = chain_found and (canonical in draft_free or not target_dependent)
        records[method] = {
            "alias_of": aliases.get(method),
            "needs_draft_model": (canonical not in draft_free) if known else None,
            "draft": draft_free.get(canonical) if known else None,
        }
    if not methods:
        problems.append("speculative: method Literal not readable")
    return {"source": path, "methods": records, "mtp_rewrites": _mtp_rewrites(cls, problems),
            "draft_model": _draft_model_gate(tree, cls),
            "aux_hidden_states": _aux_hidden_states(path, cls, tree, reader, problems),
            "async_scheduling": _async_scheduling(tree, reader, problems)}


def _is_self_attr(node: ast.expr, attr: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == attr
            and isinstance(node.value, ast.Name) and node.value.id == "self")


def _assigned(body: list[ast.stmt], attr: str) -> ast.expr | None:
    for stmt in body:
        if isinstance(stmt, ast.Assign) and any(_is_self_attr(t, attr) for t in stmt.targets):
            return stmt.value
    return None


def _assigned_const(body: list[ast.stmt], attr: str) -> str | None:
    return literal_str(_assigned(body, attr))


def _tested_methods(tree: SourceTree, reader: HintReader, path: str, test: ast.expr) -> list[str]:
    """Method names a test compares `self.method` with (`==`, `in (...)`, `in get_args(Alias)`)."""
    names: list[str] = []
    for node in ast.walk(test):
        if not (isinstance(node, ast.Compare) and _is_self_attr(node.left, "method")):
            continue
        op, right = node.ops[0], node.comparators[0]
        if isinstance(op, ast.Eq) and (s := literal_str(right)) is not None:
            names.append(s)
        elif isinstance(op, ast.In) and isinstance(right, ast.Tuple | ast.List | ast.Set):
            names += [s for s in map(literal_str, right.elts) if s is not None]
        elif isinstance(op, ast.In) and isinstance(right, ast.Name):  # a module-level tuple
            found = tree.resolve(path, right.id)
            if found is not None and isinstance(found.node, ast.Tuple | ast.List):
                names += [s for s in map(literal_str, found.node.elts) if s is not None]
        elif isinstance(op, ast.In) and isinstance(right, ast.Call) and right.args:
            for hint in reader.hints(path, right.args[0]):
                names += [str(v) for v in hint.values]
    return names


def _mentions_model_is_none(test: ast.expr) -> bool:
    return any(isinstance(n, ast.Compare) and _is_self_attr(n.left, "model")
               and isinstance(n.ops[0], ast.Is) for n in ast.walk(test))


def _if_chain(body: list[ast.stmt]) -> list[tuple[ast.expr | None, list[ast.stmt]]]:
    """The branches of the first if/elif/else chain in `body`: (test or None for else, body)."""
    first = next((s for s in body if isinstance(s, ast.If)), None)
    branches: list[tuple[ast.expr | None, list[ast.stmt]]] = []
    while first is not None:
        branches.append((first.test, first.body))
        if len(first.orelse) == 1 and isinstance(first.orelse[0], ast.If):
            first = first.orelse[0]
        else:
            if first.orelse:
                branches.append((None, first.orelse))
            first = None
    return branches


# -- MTP drafts: which models have one ---------------------------------------------------------------

def _mtp_rewrites(cls: ast.ClassDef, problems: list[str]) -> dict[str, Any] | None:
    """`hf_config_override`: {"model_types": {type: rewrite}, "architectures": {arch: rewrite}}, a
    rewrite being the MTP model type, the config key `n_predict` is read from (with its default)
    and, where the rewrite needs it, a key that must be positive."""
    method = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "hf_config_override"), None)
    if method is None:
        problems.append("speculative: hf_config_override not found (MTP model types not extracted)")
        return None
    by_type: dict[str, dict[str, Any]] = {}
    by_arch: dict[str, dict[str, Any]] = {}
    predicts: dict[str, tuple[str, Any]] = {}
    for stmt in method.body:
        if not isinstance(stmt, ast.If):
            continue
        target = next((literal_str(s.value) for s in stmt.body if isinstance(s, ast.Assign)
                       and ast.unparse(s.targets[0]) == "hf_config.model_type"), None)
        predict = _n_predict(stmt.body)
        tested_types, tested_archs, required = _tested(stmt.test)
        if predict is not None:
            for name in tested_types:
                predicts[name] = predict
        if target is None:
            continue
        rewrite = {"mtp_model_type": target, "requires_positive": required, "n_predict": predict}
        for name in tested_types:
            if name != target:
                by_type[name] = dict(rewrite)
        for arch in tested_archs:
            by_arch[arch] = dict(rewrite)
    for rewrite in [*by_type.values(), *by_arch.values()]:
        n_predict: Any = rewrite.pop("n_predict") or predicts.get(str(rewrite["mtp_model_type"])) or (None, None)
        key, default = n_predict
        rewrite["n_predict_key"], rewrite["n_predict_default"] = key, default
    return {"model_types": dict(sorted(by_type.items())), "architectures": dict(sorted(by_arch.items()))}


def _tested(test: ast.expr) -> tuple[list[str], list[str], str | None]:
    """Model types and architectures an `if` compares with, and a `config.key > 0` it requires."""
    types: list[str] = []
    archs: list[str] = []
    required = None
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        left, right = ast.unparse(node.left), node.comparators[0]
        values = ([literal_str(e) for e in right.elts] if isinstance(right, ast.Tuple | ast.List | ast.Set)
                  else [literal_str(right)])
        names = [v for v in values if v]
        if left == "hf_config.model_type":
            types += names
        elif left.startswith("hf_config.architectures") or left == "initial_architecture":
            archs += names
        elif left.startswith("hf_config.") and isinstance(node.ops[0], ast.Gt):
            required = left.removeprefix("hf_config.")
    return types, archs, required


def _n_predict(body: list[ast.stmt]) -> tuple[str, Any] | None:
    for stmt in body:
        if (isinstance(stmt, ast.Assign) and ast.unparse(stmt.targets[0]) == "n_predict"
                and isinstance(stmt.value, ast.Call) and ast.unparse(stmt.value.func) == "getattr"
                and len(stmt.value.args) >= 2):
            default = stmt.value.args[2].value if len(stmt.value.args) > 2 and isinstance(
                stmt.value.args[2], ast.Constant) else None
            return str(literal_str(stmt.value.args[1])), default
    return None


def _draft_model_gate(tree: SourceTree, cls: ast.ClassDef) -> dict[str, Any]:
    """The methods that run a separate draft model (`uses_draft_model`), and whether the
    proposer refuses a target taking multimodal inputs (raise) or only warns."""
    method = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "uses_draft_model"), None)
    methods = sorted({s for n in ast.walk(method) if isinstance(n, ast.Compare)
                      for s in [literal_str(n.comparators[0])] if s}) if method else []
    refuses, source = False, None
    for path in tree.paths_under(SPEC_DECODE):
        if not tree.contains(path, "support multimodal"):
            continue
        for func in ast.walk(tree.parse(path)):
            if isinstance(func, ast.FunctionDef) and any(
                    isinstance(n, ast.Raise) and "support multimodal" in ast.unparse(n) for n in ast.walk(func)):
                refuses, source = True, f"{path} {func.name}"
    return {"methods": methods, "refuses_multimodal_target": refuses, "source": source,
            "text_only_flag": "--language-model-only"}


# -- what a method asks of the target model and of the other flags ---------------------------------

VLLM_CONFIG = "vllm/config/vllm.py"


def _aux_hidden_states(path: str, cls: ast.ClassDef, tree: SourceTree, reader: HintReader,
                       problems: list[str]) -> dict[str, Any] | None:
    """`_verify_args`: the methods drafting from the target's auxiliary hidden states (eagle3,
    extract_hidden_states) and the model types whose text model can give them, matched as
    substrings of the target's text `model_type`. None: the release has no such check."""
    for func in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
        lists = {t.id: [s for s in map(literal_str, stmt.value.elts) if s] for stmt in ast.walk(func)
                 if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.List | ast.Tuple)
                 for t in stmt.targets if isinstance(t, ast.Name)}
        for node in ast.walk(func):
            if not (isinstance(node, ast.If) and any(isinstance(s, ast.Raise) for s in node.body)):
                continue
            listed = next((g.iter.id for g in ast.walk(node.test) if isinstance(g, ast.comprehension)
                           and isinstance(g.iter, ast.Name) and g.iter.id in lists), None)
            methods = _tested_methods(tree, reader, path, node.test)
            if listed is not None and methods and "model_type" in ast.unparse(node.test):
                return {"methods": sorted(set(methods)), "model_types": lists[listed],
                        "source": f"{path} SpeculativeConfig.{func.name}"}
    if tree.contains(path, "aux_hidden_states_supported"):
        problems.append("speculative: the target models of eagle3 (aux hidden states) not statically readable")
    return None


def _async_scheduling(tree: SourceTree, reader: HintReader, problems: list[str]) -> dict[str, Any] | None:
    """`VllmConfig.__post_init__`: with `--async-scheduling` given, the speculative methods it
    accepts (any other raises "Currently, async scheduling is only supported with EAGLE/MTP...").
    None: the release refuses no method there."""
    found = tree.resolve(VLLM_CONFIG, "VllmConfig") if tree.has(VLLM_CONFIG) else None
    init = class_method(found.node, "__post_init__") if found and isinstance(found.node, ast.ClassDef) else None
    for node in ast.walk(init) if init is not None else []:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "self.scheduler_config.async_scheduling"):
            continue
        for inner in ast.walk(node):
            if not (isinstance(inner, ast.If) and any(isinstance(s, ast.Raise) for s in inner.body)
                    and "speculative_config.method" in ast.unparse(inner.test)):
                continue
            methods: list[str] = []
            for cmp in (n for n in ast.walk(inner.test) if isinstance(n, ast.Compare)):
                right = cmp.comparators[0]
                if isinstance(cmp.ops[0], ast.NotEq) and (s := literal_str(right)) is not None:
                    methods.append(s)
                elif isinstance(cmp.ops[0], ast.NotIn) and isinstance(right, ast.Call) and right.args:
                    methods += [str(v) for hint in reader.hints(VLLM_CONFIG, right.args[0]) for v in hint.values]
            if not methods:
                problems.append("speculative: the methods async scheduling takes not statically readable")
                return None
            return {"methods": sorted(set(methods)), "flag": "--async-scheduling",
                    "source": f"{VLLM_CONFIG} VllmConfig.__post_init__"}
    return None
