"""Quantization methods of a release: names, the GPU and compute dtypes each takes, how it packs
weights, and the checks FP8 block quantization makes on a tensor-parallel split.

Paths inside the wheel:
- `model_executor/layers/quantization/__init__.py`: `QuantizationMethods`, deprecated methods,
  `get_quantization_config`'s method -> class table;
- each class's `get_min_capability` and `get_supported_act_dtypes` (`config/vllm.py`
  `VllmConfig._get_quantization_config` refuses a GPU below the one and a `--dtype` outside the other);
- `config/model.py` `ModelConfig._verify_quantization`: the order override methods are probed in
  (an AWQ checkpoint runs as `awq_marlin` where Marlin takes it);
- `quantization/utils/marlin_utils.py`: the compute capability and group sizes Marlin takes;
- `from_config` / `__init__` / `create_weights` of each class's module: which config.json keys
  give the bits and group size, the pack factor, and each weight parameter's storage dtype (for
  sizing quantized checkpoints; the capacity planner reads it);
- what the layers need of the GPU and of the tensor-parallel split (compressed-tensors schemes,
  FP8 block shapes of linear layers and MoE experts): quantization_layers.py.
"""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.fold_ast import Unfoldable
from tools.vllm_release.predicates import Folder
from tools.vllm_release.quantization_layers import (
    compressed_tensors_schemes,
    fp8_linear_block_checks,
    fp8_moe_block_checks,
    fp8_moe_refine_min_block,
    min_capability,
)
from tools.vllm_release.source_tree import SourceTree, Symbol, class_method, literal_str
from tools.vllm_release.type_hints import HintReader, KwargsRules

QUANTIZATION_INIT = "vllm/model_executor/layers/quantization/__init__.py"
MARLIN_UTILS = "vllm/model_executor/layers/quantization/utils/marlin_utils.py"
MODEL_CONFIG = ("vllm/config/model.py", "vllm/config/__init__.py")
CUDA_PLATFORM = ("vllm/platforms/cuda.py", ("NvmlCudaPlatform", "CudaPlatformBase"))
_PARAMETER_CALL = "Parameter"  # torch.nn.Parameter, PackedvLLMParameter, ModelWeightParameter ...


def extract_quantization(tree: SourceTree, problems: list[str]) -> dict[str, Any]:
    if not tree.has(QUANTIZATION_INIT):
        problems.append("quantization: package not found")
        return {"source": None, "methods": {}}
    reader = HintReader(tree, KwargsRules())
    alias = tree.resolve(QUANTIZATION_INIT, "QuantizationMethods")
    names: list[str] = []
    if alias is not None and isinstance(alias.node, ast.expr):
        for hint in reader.hints(alias.path, alias.node):
            names += [str(v) for v in hint.values]
    deprecated = _string_list(tree, QUANTIZATION_INIT, "DEPRECATED_QUANTIZATION_METHODS")
    classes = _method_classes(tree)
    folder = _folder(tree)
    methods: dict[str, Any] = {}
    for name in names:
        cls = classes.get(name)
        min_cc, source = (None, None)
        if cls is not None and isinstance(cls.node, ast.ClassDef):
            min_cc, source = min_capability(tree, cls)
        if min_cc is None:
            problems.append(f"quantization: {name} minimum capability not statically readable")
        methods[name] = {
            "min_capability": min_cc,
            "deprecated": name in deprecated,
            "config_class": cls.name if cls else None,
            "source": source or (cls.path if cls else None),
            "act_dtypes": _act_dtypes(folder, cls, name, problems) if cls else None,
            "weight_packing": _packing(tree, cls) if cls else None,
            "type_map": _type_map_keys(cls) if cls else None,
        }
    if not methods:
        problems.append("quantization: QuantizationMethods not found")
    return {"source": QUANTIZATION_INIT, "methods": methods, "override_order": _override_order(tree, problems),
            "marlin": _marlin(tree, problems), "fp8_moe_block_checks": fp8_moe_block_checks(tree, problems),
            "fp8_moe_refine_min_block": fp8_moe_refine_min_block(tree, problems),
            "fp8_linear_block_checks": fp8_linear_block_checks(tree, problems),
            "compressed_tensors_schemes": compressed_tensors_schemes(tree, problems)}


def _folder(tree: SourceTree) -> Folder:
    path, names = CUDA_PLATFORM
    platform = next((s for n in names if tree.has(path) and (s := tree.resolve(path, n)) is not None), None)
    return Folder(tree, frozenset({"device_capability"}), frozenset(), platform)


def _string_list(tree: SourceTree, path: str, name: str) -> set[str]:
    found = tree.resolve(path, name)
    if found is not None and isinstance(found.node, ast.List | ast.Tuple | ast.Set):
        return {s for s in map(literal_str, found.node.elts) if s}
    return set()


def _method_classes(tree: SourceTree) -> dict[str, Symbol]:
    """`method_to_config` in `get_quantization_config`: method name -> config class."""
    func = tree.resolve(QUANTIZATION_INIT, "get_quantization_config")
    if func is None or not isinstance(func.node, ast.FunctionDef):
        return {}
    local_imports = {a.asname or a.name: (stmt, a.name) for stmt in ast.walk(func.node)
                     if isinstance(stmt, ast.ImportFrom) for a in stmt.names}
    table = next((n.value for n in ast.walk(func.node) if isinstance(n, ast.AnnAssign | ast.Assign)
                  and isinstance(n.value, ast.Dict)), None)
    classes: dict[str, Symbol] = {}
    if not isinstance(table, ast.Dict):
        return classes
    for key, value in zip(table.keys, table.values, strict=True):
        name = literal_str(key)
        if name is None or not isinstance(value, ast.Name):
            continue
        if value.id in local_imports:
            stmt, original = local_imports[value.id]
            found = tree.resolve_import(func.path, stmt, original)
        else:
            found = tree.resolve(func.path, value.id)
        if found is not None and found.kind == "class":
            classes[name] = found
    return classes


def _act_dtypes(folder: Folder, cls: Symbol, name: str, problems: list[str]) -> str | None:
    """`get_supported_act_dtypes()` as an expression of the GPU (GGUF drops bfloat16 on
    Blackwell), e.g. "['float16']"; what `--dtype` must be for the method."""
    try:
        return folder.text(folder.method(cls, "get_supported_act_dtypes", {}))
    except Unfoldable as exc:
        problems.append(f"quantization: {name} activation dtypes not statically readable ({exc})")
        return None


def _type_map_keys(cls: Symbol) -> list[Any] | None:
    """What a Marlin override converts: its `TYPE_MAP` keys, weight bits (AWQ: 4) or
    [bits, symmetric] pairs (GPTQ: [4, true], [8, true])."""
    assert isinstance(cls.node, ast.ClassDef)
    table = next((s.value for s in cls.node.body if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)
                  and s.targets[0].id == "TYPE_MAP" and isinstance(s.value, ast.Dict)), None)
    if table is None:
        return None
    keys: list[Any] = []
    for key in table.keys:
        if isinstance(key, ast.Constant):
            keys.append(key.value)
        elif isinstance(key, ast.Tuple) and all(isinstance(e, ast.Constant) for e in key.elts):
            keys.append([e.value for e in key.elts if isinstance(e, ast.Constant)])
    return keys


def _override_order(tree: SourceTree, problems: list[str]) -> list[str] | None:
    """`_verify_quantization`'s `overrides` list: the methods probed, in order, for a checkpoint
    they can run faster (gptq -> gptq_marlin, awq -> awq_marlin)."""
    for path in MODEL_CONFIG:
        if not tree.has(path):
            continue
        for node in ast.walk(tree.parse(path)):
            if (isinstance(node, ast.FunctionDef) and node.name == "_verify_quantization"):
                for stmt in ast.walk(node):
                    if (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
                            and stmt.targets[0].id == "overrides" and isinstance(stmt.value, ast.List)):
                        return [s for s in map(literal_str, stmt.value.elts) if s]
    problems.append("quantization: override order not found")
    return None


def _marlin(tree: SourceTree, problems: list[str]) -> dict[str, Any] | None:
    """Where Marlin kernels run: the capability `query_marlin_supported_quant_types` requires
    and `MARLIN_SUPPORTED_GROUP_SIZES`; and the bit widths the AWQ/GPTQ Marlin configs map."""
    if not tree.has(MARLIN_UTILS):
        problems.append("quantization: marlin_utils not found")
        return None
    groups = tree.resolve(MARLIN_UTILS, "MARLIN_SUPPORTED_GROUP_SIZES")
    group_sizes = None
    if groups is not None and isinstance(groups.node, ast.List):
        group_sizes = [_int(e) for e in groups.node.elts]
    minimum = None
    query = tree.resolve(MARLIN_UTILS, "query_marlin_supported_quant_types")
    if query is not None and isinstance(query.node, ast.FunctionDef):
        for node in ast.walk(query.node):
            if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                    and ast.unparse(node.test.left) == "device_capability" and isinstance(node.test.ops[0], ast.Lt)
                    and isinstance(node.test.comparators[0], ast.Constant)):
                minimum = node.test.comparators[0].value
    if minimum is None or group_sizes is None:
        problems.append("quantization: Marlin capability or group sizes not statically readable")
    return {"min_capability": minimum, "group_sizes": group_sizes, "source": MARLIN_UTILS}


def _int(node: ast.expr) -> int | None:
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, int)):
        return -node.operand.value
    return int(node.value) if isinstance(node, ast.Constant) and isinstance(node.value, int) else None


# -- how a method packs weights (for sizing quantized checkpoints) ---------------------------------

def _packing(tree: SourceTree, cls: Symbol) -> dict[str, Any]:
    """What the method's module says about the bytes of a weight: the config.json keys its
    `from_config` reads (bits, group size, ...), the pack factor `__init__` derives, and each
    parameter `create_weights` registers with its storage dtype (`params_dtype`: the compute dtype)."""
    assert isinstance(cls.node, ast.ClassDef)
    return {"config_keys": _config_keys(cls.node), "pack_factor": _pack_factor(cls.node),
            "parameters": _parameters(tree.parse(cls.path)), "source": cls.path}


def _config_keys(cls: ast.ClassDef) -> dict[str, list[str]]:
    """`x = cls.get_from_keys[_or](config, ["a", "b"], ...)` in `from_config`: x -> its keys."""
    method = class_method(cls, "from_config")
    found: dict[str, list[str]] = {}
    for node in ast.walk(method) if method is not None else []:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr.startswith("get_from_keys") and len(node.value.args) >= 2
                and isinstance(node.value.args[1], ast.List)):
            found[node.targets[0].id] = [s for s in map(literal_str, node.value.args[1].elts) if s]
    return dict(sorted(found.items()))


def _pack_factor(cls: ast.ClassDef) -> str | None:
    """`self.pack_factor = ...` in `__init__`, over its parameters (`32 // weight_bits`)."""
    init = class_method(cls, "__init__")
    for node in ast.walk(init) if init is not None else []:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr == "pack_factor"):
            return ast.unparse(node.value).replace("self.", "")
    return None


def _parameters(module: ast.Module) -> dict[str, dict[str, dict[str, Any]]]:
    """Per `create_weights` of the module's classes: registered name -> storage dtype and packing."""
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for cls in (n for n in module.body if isinstance(n, ast.ClassDef)):
        method = class_method(cls, "create_weights")
        if method is None:
            continue
        made: dict[str, dict[str, Any]] = {}
        registered: dict[str, dict[str, Any]] = {}
        tables = {n.targets[0].id: n.value for n in ast.walk(method) if isinstance(n, ast.Assign)
                  and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Dict)}
        for node in ast.walk(method):
            if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Call)):
                facts = _parameter_facts(node.value, tables)
                if facts is not None:
                    made[node.targets[0].id] = facts
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "register_parameter" and len(node.args) == 2):
                name, var = literal_str(node.args[0]), node.args[1]
                if name is not None and isinstance(var, ast.Name) and var.id in made:
                    registered[name] = made[var.id]
        if registered:
            result[cls.name] = dict(sorted(registered.items()))
    return dict(sorted(result.items()))


def _parameter_facts(call: ast.Call, tables: dict[str, ast.Dict]) -> dict[str, Any] | None:
    """A `*Parameter(data=torch.empty(..., dtype=X), ...)` call, its data possibly passed in a
    local kwargs table (`GroupQuantScaleParameter(**scale_args)`)."""
    if not ast.unparse(call.func).endswith(_PARAMETER_CALL):
        return None
    spread = [tables[k.value.id] for k in call.keywords
              if k.arg is None and isinstance(k.value, ast.Name) and k.value.id in tables]
    empty = next((n for part in (call, *spread) for n in ast.walk(part) if isinstance(n, ast.Call)
                  and ast.unparse(n.func) in ("torch.empty", "torch.zeros", "torch.ones")), None)
    if empty is None:
        return None
    dtype = next((k.value for k in empty.keywords if k.arg == "dtype"), None)
    packed = next((k.value for k in call.keywords if k.arg == "packed_factor"), None)
    shape = [ast.unparse(a) for a in empty.args]
    return {"dtype": ast.unparse(dtype).removeprefix("torch.") if dtype is not None else None,
            "shape": shape, "packed_factor": ast.unparse(packed).replace("self.", "") if packed is not None else None}

