"""Every `vllm serve` flag of a release, and the command-line facts of its FlexibleArgumentParser."""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.interpreter import Interpreter
from tools.vllm_release.source_tree import SourceTree, literal_str
from tools.vllm_release.type_hints import HintReader, KwargsRules, TypeFn
from tools.vllm_release.values import (
    HUMAN_READABLE,
    TYPE_FUNCS,
    UNKNOWN,
    AddArgument,
    ClassRef,
    ExternalRef,
    FuncRef,
    ParserRef,
    callee_name,
)

ARG_UTILS = "vllm/engine/arg_utils.py"
# where the `serve` subcommand builds its parser, newest layout first
SERVE_ENTRIES = [
    ("vllm/entrypoints/cli/serve.py", "subparser_init"),
]
MAKE_ARG_PARSER_FILES = ["vllm/entrypoints/openai/cli_args.py", "vllm/entrypoints/common/cli_args.py"]
PARSER_CLASS_FILES = ["vllm/utils/argparse_utils.py", "vllm/utils/__init__.py"]
_NO_VALUE_ACTIONS = {"store_true": "bool", "store_false": "bool", "boolean_optional": "bool",
                     "store_const": "str", "count": "int", "help": "bool", "version": "bool"}


def extract_flags(tree: SourceTree, problems: list[str]) -> tuple[dict[str, Any], list[str]]:
    """(`--long-name` -> flag record, positional names) for `vllm serve`."""
    rules = KwargsRules.read(tree, ARG_UTILS) if tree.has(ARG_UTILS) else KwargsRules()
    interp = Interpreter(tree, HintReader(tree, rules))
    for path, method in SERVE_ENTRIES:
        if tree.has(path):
            for node in tree.parse(path).body:
                if isinstance(node, ast.ClassDef) and any(
                    isinstance(s, ast.FunctionDef) and s.name == method for s in node.body
                ):
                    interp.run_method(path, node.name, method, [ParserRef(None)])
    if not interp.calls:  # an older layout: the OpenAI server's own parser
        for path in MAKE_ARG_PARSER_FILES:
            found = tree.resolve(path, "make_arg_parser") if tree.has(path) else None
            if found is not None and isinstance(found.node, ast.FunctionDef):
                interp.call(FuncRef(path, found.node), [ParserRef(None)], {})
                break
    problems.extend(interp.problems)
    if not interp.calls:
        problems.append("flags: no add_argument call reached from the serve entry point")
    flags: dict[str, Any] = {
        "--help": _record(AddArgument(["-h", "--help"], {"action": "help"}, None, "argparse"), problems)
    }
    positionals: list[str] = []
    for call in interp.calls:
        if call.options and not call.options[0].startswith("-"):
            positionals.append(call.options[0])
            continue
        if call.options:
            longs = [o for o in call.options if o.startswith("--")]
            flags[(longs or call.options)[0]] = _record(call, problems)
    return flags, positionals


def _record(call: AddArgument, problems: list[str]) -> dict[str, Any]:
    kw = call.kwargs
    longs = [o for o in call.options if o.startswith("--")]
    name = (longs or call.options)[0]
    action = _action(kw.get("action", "store"))
    value_type = _NO_VALUE_ACTIONS.get(action)
    type_fn = _type_fn(kw.get("type"))
    nargs = kw.get("nargs")
    choices = kw.get("choices")
    if choices is UNKNOWN:
        problems.append(f"flags: {name} choices not statically readable")
        choices = None
    if isinstance(choices, list | tuple) and not all(isinstance(c, str | int | float) for c in choices):
        problems.append(f"flags: {name} choices partly decided at run time (kept the static ones)")
        choices = [c for c in choices if isinstance(c, str | int | float) or c is None]
    if isinstance(choices, list | tuple) and kw.get("__optional__"):
        choices = [c for c in choices if c not in (None, "None")]
    if isinstance(choices, list | tuple) and type_fn.name in ("str", "int", "float"):
        choices = sorted(set(choices), key=lambda c: (str(type(c)), c))
    dest = kw.get("dest") if isinstance(kw.get("dest"), str) else name.lstrip("-").replace("-", "_")
    takes_value = value_type is None and nargs != 0
    help_text = kw.get("help")
    return {
        "aliases": [o for o in call.options if o != name],
        "negations": ["--no-" + o[2:] for o in longs] if action == "boolean_optional" else [],
        "action": action,
        "type": value_type or type_fn.name,
        "takes_value": takes_value,
        "nargs": (nargs if isinstance(nargs, int | str) else None) if takes_value else 0,
        "choices": list(choices) if isinstance(choices, list | tuple) else None,
        "json": takes_value and type_fn.name == "json",
        "human_readable": takes_value and type_fn.human_readable,
        "optional": bool(kw.get("__optional__")),
        "dest": dest,
        "deprecated": kw.get("deprecated") is True,
        "hidden": isinstance(help_text, ExternalRef) and help_text.dotted.endswith("SUPPRESS"),
        "group": call.group,
        "source": call.path,
        "field": kw.get("__field__"),
    }


def _action(value: Any) -> str:
    if value == "BooleanOptionalAction":  # as get_kwargs sets it for bool fields
        return "boolean_optional"
    if isinstance(value, str):
        return value
    if isinstance(value, ExternalRef) and value.dotted.endswith("BooleanOptionalAction"):
        return "boolean_optional"
    if isinstance(value, ClassRef):
        return f"custom:{value.node.name}"
    return "custom"


def _type_fn(value: Any) -> TypeFn:
    if isinstance(value, TypeFn):
        return value
    name = callee_name(value) if isinstance(value, FuncRef | ExternalRef) else ""
    if name in HUMAN_READABLE:
        return TypeFn("int", human_readable=True)
    return TypeFn(TYPE_FUNCS.get(name, "str"))


# -- FlexibleArgumentParser ----------------------------------------------------------------------

def extract_parser_facts(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    """What vLLM's parser does to argv before argparse sees it (the project's extraArgs must agree)."""
    for path in PARSER_CLASS_FILES:
        if not tree.has(path):
            continue
        cls = next((n for n in tree.parse(path).body
                    if isinstance(n, ast.ClassDef) and n.name == "FlexibleArgumentParser"), None)
        if cls is not None:
            return _parser_facts(tree, path, cls)
    problems.append("parser: FlexibleArgumentParser not found")
    return {}


def _parser_facts(tree: SourceTree, path: str, cls: ast.ClassDef) -> dict[str, Any]:
    text = ast.unparse(cls)
    parse_args = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "parse_args"), None)
    pattern = None
    o_target = None
    if parse_args is not None:
        for node in ast.walk(parse_args):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("compile") and node.args:
                pattern = literal_str(node.args[0]) or pattern
            if isinstance(node, ast.If) and "startswith('-O')" in ast.unparse(node.test):
                o_target = next((c.value for c in ast.walk(ast.Module(node.body, []))
                                 if isinstance(c, ast.Constant) and isinstance(c.value, str)
                                 and c.value.startswith("-")), None)
    abbrev = _allow_abbrev(tree, text)
    return {
        "source": path,
        "class": "FlexibleArgumentParser",
        # argparse's default is allow_abbrev=True: a unique prefix of a long option selects it
        "allow_abbrev": abbrev,
        "abbrev_rule": "exact option string first; else a prefix of exactly one long option "
                       "(after underscore normalisation); several matches is an error",
        "underscore_to_dash": pattern is not None and "replace('_', '-')" in text,
        "underscore_scope": pattern,
        "equals_value": "'=' in arg" in text,
        "dotted_json_keys": "'.' in processed_arg" in text,
        "list_append_suffix": "+" if "endswith('+')" in text else None,
        "optimization_shorthand": o_target,
        "config_file_flag": "--config" if "'--config'" in text else None,
        "duplicate_keys_warning": "duplicate" in text.lower(),
    }


def _allow_abbrev(tree: SourceTree, class_text: str) -> bool:
    """False only if the release passes allow_abbrev=False to its parsers."""
    texts = [class_text] + [tree.text(p) for p, _ in SERVE_ENTRIES if tree.has(p)]
    main = "vllm/entrypoints/cli/main.py"
    if tree.has(main):
        texts.append(tree.text(main))
    return not any("allow_abbrev=False" in t.replace(" ", "") for t in texts)
