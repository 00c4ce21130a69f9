"""What a quantized checkpoint's layers need of the GPU and of the tensor-parallel split, read from
the layer code rather than the method's config class (paths inside the wheel):

- `quantization/compressed_tensors/schemes/*.py`: each compressed-tensors scheme's
  `get_min_capability()`. `CompressedTensorsConfig` itself asks for 7.0, but `get_scheme` refuses
  a layer whose scheme needs more ("Quantization scheme is not supported for the current GPU"),
  while the model is built: an FP8 or 4-bit compressed-tensors checkpoint never runs on a V100.
- `quantization/utils/fp8_utils.py` `validate_fp8_block_shape`: the conditions each
  block-quantized FP8 linear layer checks on its tensor-parallel shard (row-parallel input,
  column-parallel outputs), over `tp_size`, `input_size`, `input_size_per_partition`,
  `output_partition_size`, `block_n` and `block_k`;
- `quantization/fp8.py` `Fp8MoEMethod.create_weights` (or `validate_fp8_block_shape_moe`): the
  same for each rank's share of an MoE expert, where the release raises on it unconditionally.
"""

from __future__ import annotations

import ast
from typing import Any

from tools.vllm_release.source_tree import SourceTree, Symbol, class_method, message_template

FP8 = "vllm/model_executor/layers/quantization/fp8.py"
FP8_UTILS = "vllm/model_executor/layers/quantization/utils/fp8_utils.py"
CT_SCHEMES = "vllm/model_executor/layers/quantization/compressed_tensors/schemes/"
_LINEAR_INPUTS = frozenset({"tp_size", "input_size", "input_size_per_partition", "output_partition_size",
                            "block_n", "block_k"})
_MOE_INPUTS = frozenset({"intermediate_size_per_partition", "block_n", "block_k", "tp_size"})


def min_capability(tree: SourceTree, cls: Symbol) -> tuple[int | None, str | None]:
    """`get_min_capability()` of `cls` (or the class it inherits it from) when it returns a constant."""
    assert isinstance(cls.node, ast.ClassDef)
    for owner in tree.mro(cls.path, cls.node):
        assert isinstance(owner.node, ast.ClassDef)
        method = class_method(owner.node, "get_min_capability")
        if method is None:
            continue
        returns = [n for n in ast.walk(method) if isinstance(n, ast.Return)]
        if len(returns) == 1 and isinstance(returns[0].value, ast.Constant):
            value = returns[0].value.value
            if isinstance(value, int) and not isinstance(value, bool):
                return value, owner.path
        return None, owner.path
    return None, None


def compressed_tensors_schemes(tree: SourceTree, problems: list[str]) -> dict[str, Any] | None:
    """Scheme class -> its minimum compute capability (75 = CC 7.5), for every scheme module's
    classes, inherited minimums included (a Marlin variant subclassing its scheme)."""
    paths = tree.paths_under(CT_SCHEMES)
    if not paths:
        problems.append("quantization: compressed-tensors schemes not found")
        return None
    schemes: dict[str, int] = {}
    for path in paths:
        for node in tree.parse(path).body:
            if not isinstance(node, ast.ClassDef):
                continue
            method = class_method(node, "get_min_capability")
            if method is not None and any(ast.unparse(d).endswith("abstractmethod") for d in method.decorator_list):
                continue
            found, owner = min_capability(tree, Symbol("class", path, node.name, node))
            if found is None and (method is None or owner is None):
                continue  # inherits nothing readable (an abstract base's), or no scheme at all
            if found is None:
                problems.append(f"quantization: compressed-tensors scheme {node.name} minimum capability "
                                "not statically readable")
            else:
                schemes[node.name] = found
    return {"min_capability": dict(sorted(schemes.items())), "source": CT_SCHEMES + "*.py"}


def _raises(func: ast.FunctionDef, inputs: frozenset[str]) -> list[dict[str, str]]:
    """Each `if <test>: raise ...` in `func` whose test reads only `inputs` (directly or through
    a loop variable of that name): {when, message}."""
    checks = []
    for node in ast.walk(func):
        if not isinstance(node, ast.If):
            continue
        raised = next((s for s in node.body if isinstance(s, ast.Raise)), None)
        names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
        if raised is None or not names or not names <= inputs:
            continue
        message = raised.exc.args[0] if isinstance(raised.exc, ast.Call) and raised.exc.args else None
        checks.append({"when": ast.unparse(node.test),
                       "message": message_template(message) if message is not None else ""})
    return checks


def fp8_linear_block_checks(tree: SourceTree, problems: list[str]) -> dict[str, Any] | None:
    """`validate_fp8_block_shape`'s raises: the row-parallel one (over the layer's input) and the
    column-parallel one (over each output partition of a split or merged layer)."""
    func = tree.resolve(FP8_UTILS, "validate_fp8_block_shape") if tree.has(FP8_UTILS) else None
    if func is None or not isinstance(func.node, ast.FunctionDef):
        problems.append("quantization: validate_fp8_block_shape not found (FP8 linear block checks)")
        return None
    checks = _raises(func.node, _LINEAR_INPUTS)
    row = [c for c in checks if "input_size_per_partition" in c["when"]]
    column = [c for c in checks if "output_partition_size" in c["when"]]
    if not row or not column:
        problems.append("quantization: FP8 linear block checks not found")
        return None
    return {"row": row, "column": column, "source": f"{FP8_UTILS} validate_fp8_block_shape"}


def fp8_moe_block_checks(tree: SourceTree, problems: list[str]) -> list[dict[str, str]] | None:
    """The `raise ValueError` conditions a block-quantized checkpoint's `Fp8MoEMethod.create_weights`
    checks on each rank's share of an expert, over `intermediate_size_per_partition`, `block_n`,
    `block_k` and `tp_size`: raised outright up to v0.28; from v0.29 only while the block scales
    were not refined (`self.weight_scale_refine is None`: inline in v0.29, then in
    `fp8_utils.validate_fp8_block_shape_moe`), which `fp8_moe_refine_min_block` decides."""
    cls = tree.resolve(FP8, "Fp8MoEMethod") if tree.has(FP8) else None
    method = class_method(cls.node, "create_weights") if cls and isinstance(cls.node, ast.ClassDef) else None
    if method is None:
        problems.append("quantization: Fp8MoEMethod.create_weights not found")
        return None
    checks = _raises(method, _MOE_INPUTS) or _refine_gated_raises(method)
    if not checks and "validate_fp8_block_shape_moe" in ast.unparse(method):
        helper = tree.resolve(FP8_UTILS, "validate_fp8_block_shape_moe") if tree.has(FP8_UTILS) else None
        checks = _raises(helper.node, _MOE_INPUTS) if helper and isinstance(helper.node, ast.FunctionDef) else []
    if not checks:
        problems.append("quantization: FP8 MoE block checks not found")
    return checks


_REFINE_UNSET = "self.weight_scale_refine is None"


def _refine_gated_raises(func: ast.FunctionDef) -> list[dict[str, str]]:
    """v0.29's `if <test over inputs>: if self.weight_scale_refine is None: raise ...`."""
    checks = []
    for node in ast.walk(func):
        inner = next((s for s in node.body if isinstance(s, ast.If) and ast.unparse(s.test) == _REFINE_UNSET), None) \
            if isinstance(node, ast.If) else None
        raised = next((s for s in inner.body if isinstance(s, ast.Raise)), None) if inner else None
        if not isinstance(node, ast.If) or raised is None:
            continue
        names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
        if names and names <= _MOE_INPUTS:
            message = raised.exc.args[0] if isinstance(raised.exc, ast.Call) and raised.exc.args else None
            checks.append({"when": ast.unparse(node.test),
                           "message": message_template(message) if message is not None else ""})
    return checks


FP8_MOE_ORACLE = "vllm/model_executor/layers/fused_moe/oracle/fp8.py"
_REFINE_GCD = "math.gcd(block_n, block_k, ispp, config.hidden_dim)"


def fp8_moe_refine_min_block(tree: SourceTree, problems: list[str]) -> int | None:
    """`refine_fp8_moe_block_shape` (v0.29+): a shard that is not whole checkpoint blocks gets
    scale blocks of gcd(block_n, block_k, shard width, hidden size) when that is at least this
    floor (32) - then create_weights raises nothing; None before v0.29 (no refinement).
    With `--moe-backend auto` (the default) the refinement always applies."""
    func = tree.resolve(FP8_MOE_ORACLE, "refine_fp8_moe_block_shape") if tree.has(FP8_MOE_ORACLE) else None
    if func is None or not isinstance(func.node, ast.FunctionDef):
        return None
    if _REFINE_GCD not in ast.unparse(func.node):
        problems.append(f"quantization: refine_fp8_moe_block_shape no longer takes {_REFINE_GCD}")
        return None
    for node in ast.walk(func.node):
        if isinstance(node, ast.Compare) and ast.unparse(node.left) == "refine" and isinstance(node.ops[0], ast.Lt) \
                and isinstance(node.comparators[0], ast.Constant) and isinstance(node.comparators[0].value, int):
            return node.comparators[0].value
    problems.append("quantization: refine_fp8_moe_block_shape's floor not statically readable")
    return None
