"""What a release knows about model families: facts keyed by `model_type` or architecture.

Paths inside the wheel:
- `config/model.py` `_FLOAT16_NOT_SUPPORTED_MODELS`: model types `_check_valid_dtype` refuses in float16;
- `config/model.py` `ModelConfig.is_mm_prefix_lm`: model types whose image tokens attend
  bidirectionally (an attention backend must support "multimodal prefix" attention);
- `config/model.py` `_get_and_verify_max_len` and
  `transformers_utils/model_arch_config_convertor.py` `derive_max_model_len_and_key`: how the
  longest context is derived (config keys, which RoPE types scale it, the models whose limit is
  already scaled);
- `model_executor/models/registry.py` `_MULTIMODAL_MODELS` (architectures with multimodal
  inputs) and, per architecture, whether its module gives its attention layers `sinks=`.
"""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.source_tree import SourceTree, literal_str

MODEL_CONFIG = ("vllm/config/model.py", "vllm/config/__init__.py")
CONVERTORS = ("vllm/transformers_utils/model_arch_config_convertor.py", "vllm/config/model.py",
              "vllm/config/__init__.py")
MODEL_REGISTRY = "vllm/model_executor/models/registry.py"
MODELS_PACKAGE = "vllm/model_executor/models/"


def extract_model_facts(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    config_path = next((p for p in MODEL_CONFIG if tree.has(p) and tree.contains(p, "_FLOAT16_NOT_SUPPORTED")), None)
    if config_path is None:
        problems.append("models: config/model.py not found")
        return {"source": None}
    module = tree.parse(config_path)
    return {
        "source": config_path,
        "float16_refused": _dict_keys(module, "_FLOAT16_NOT_SUPPORTED_MODELS", problems),
        **_mm_prefix(tree, problems),
        "max_len": _max_len(tree, module, problems),
        **_architectures(tree, problems),
    }


def _dict_keys(module: ast.Module, name: str, problems: list[str]) -> list[str] | None:
    for stmt in module.body:
        if (isinstance(stmt, ast.Assign | ast.AnnAssign) and isinstance(stmt.value, ast.Dict)
                and any(isinstance(t, ast.Name) and t.id == name
                        for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]))):
            return sorted(s for s in map(literal_str, stmt.value.keys) if s)
    problems.append(f"models: {name} not found")
    return None


def _mm_prefix(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    """`is_mm_prefix_lm`'s fallback list of model types (a config.json may also say
    `is_mm_prefix_lm` itself), and whether the release turns it off for text-only serving
    (`--language-model-only`: the method takes `supports_multimodal`)."""
    for path in CONVERTORS:
        if not tree.has(path) or not tree.contains(path, "MM_PREFIX_LM_MODELS"):
            continue
        for func in ast.walk(tree.parse(path)):
            if not (isinstance(func, ast.FunctionDef) and func.name == "is_mm_prefix_lm"):
                continue
            for node in ast.walk(func):
                if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                        and node.targets[0].id == "MM_PREFIX_LM_MODELS"
                        and isinstance(node.value, ast.Tuple | ast.List)):
                    return {"mm_prefix_model_types": sorted(s for s in map(literal_str, node.value.elts) if s),
                            "mm_prefix_off_when_text_only": any(a.arg == "supports_multimodal" for a in func.args.args),
                            "mm_prefix_source": f"{path} is_mm_prefix_lm"}
    problems.append("models: MM_PREFIX_LM_MODELS not found (multimodal-prefix models not extracted)")
    return {"mm_prefix_model_types": None, "mm_prefix_off_when_text_only": False, "mm_prefix_source": None}


def _max_len(tree: SourceTree, module: ast.Module, problems: list[str]) -> dict[str, Any] | None:
    """How `_get_and_verify_max_len` derives the longest context: the config keys (smallest
    wins), the RoPE types whose `factor` does not multiply it, the one that starts from
    `original_max_position_embeddings`, and the model types whose limit is already scaled."""
    func = next((n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "_get_and_verify_max_len"),
                None)
    if func is None:
        problems.append("models: _get_and_verify_max_len not found")
        return None
    unscaled: list[str] | None = None
    from_original: dict[str, str] = {}
    prescaled: list[str] = []
    for node in ast.walk(func):
        if (isinstance(node, ast.Compare) and ast.unparse(node.left) == "rope_type"
                and isinstance(node.ops[0], ast.NotIn) and isinstance(node.comparators[0], ast.Tuple)):
            unscaled = [s for s in map(literal_str, node.comparators[0].elts) if s]
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and ast.unparse(node.test.left) == "rope_type"):
            kind = literal_str(node.test.comparators[0])
            for stmt in node.body:
                if (kind and isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Subscript)
                        and ast.unparse(stmt.targets[0]) == "derived_max_model_len"):
                    key = literal_str(stmt.value.slice)
                    if key:
                        from_original[kind] = key
        if (isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.NotIn)
                and ast.unparse(node.comparators[0]).endswith("model_type") and literal_str(node.left)):
            prescaled.append(str(literal_str(node.left)))
    keys = _possible_keys(tree)
    if unscaled is None or keys is None:
        problems.append("models: max-model-len derivation not statically readable")
    return {"keys": keys, "rope_types_not_scaling": unscaled, "rope_from_original": from_original,
            "prescaled_model_types": sorted(prescaled), "source": f"{MODEL_CONFIG[0]} _get_and_verify_max_len"}


def _possible_keys(tree: SourceTree) -> list[str] | None:
    for path in CONVERTORS:
        if not tree.has(path):
            continue
        for node in ast.walk(tree.parse(path)):
            if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id == "possible_keys" and isinstance(node.value, ast.List)):
                return [s for s in map(literal_str, node.value.elts) if s]
    return None


def _architectures(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    """Registry tables: multimodal architectures, and those whose attention has sinks."""
    if not tree.has(MODEL_REGISTRY):
        problems.append("models: model registry not found")
        return {"multimodal_architectures": None, "sink_architectures": None}
    tables: dict[str, dict[str, str]] = {}
    for stmt in tree.parse(MODEL_REGISTRY).body:
        if (isinstance(stmt, ast.Assign | ast.AnnAssign) and isinstance(stmt.value, ast.Dict)):
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            if isinstance(target, ast.Name):
                tables[target.id] = {name: module for key, value in zip(stmt.value.keys, stmt.value.values, strict=True)
                                     if (name := literal_str(key)) and isinstance(value, ast.Tuple)
                                     and (module := literal_str(value.elts[0]))}
    multimodal = tables.get("_MULTIMODAL_MODELS")
    if multimodal is None:
        problems.append("models: _MULTIMODAL_MODELS not found")
    modules = {arch: module for table in tables.values() for arch, module in table.items()}
    sinks = {arch: kind for arch, module in modules.items()
             if (kind := _sinks(tree, f"{MODELS_PACKAGE}{module}.py")) is not None}
    return {"multimodal_architectures": sorted(multimodal) if multimodal is not None else None,
            "sink_architectures": dict(sorted(sinks.items())), "registry_source": MODEL_REGISTRY}


def _sinks(tree: SourceTree, path: str) -> str | None:
    """Whether a model module passes `sinks=` to its attention: "always" when the value is a
    parameter the layer always creates, "config" when it may be None (a config switch)."""
    if not tree.has(path) or not tree.contains(path, "sinks="):
        return None
    module = tree.parse(path)
    passed = [k.value for n in ast.walk(module) if isinstance(n, ast.Call)
              for k in n.keywords if k.arg == "sinks"]
    if not passed:
        return None
    conditional = False
    for value in passed:
        attr = value.attr if isinstance(value, ast.Attribute) else None
        for node in ast.walk(module):
            if (attr and isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute)
                    and node.targets[0].attr == attr and isinstance(node.value, ast.IfExp)):
                conditional = True
    return "config" if conditional else "always"
