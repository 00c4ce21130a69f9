"""The generator's fold of checks that go through a registry vLLM declares empty and only
plugins fill, and an enum looked up by name (v0.34's `get_kv_quant_mode`, config/cache.py and
v1/kv_cache_interface.py, cut down): the FP8 KV-cache check of FlashAttention reads them."""

from __future__ import annotations

import ast
import textwrap

import pytest

from tools.vllm_release.fold_ast import Scope
from tools.vllm_release.predicates import Folder
from tools.vllm_release.source_tree import SourceTree
from vllm_serving.engine.expressions import evaluate

SOURCES = {
    "vllm/config/cache.py": '''
        _KV_CACHE_DTYPE_HANDLERS: dict[str, KVCacheDTypeHandler] = {}

        def register_kv_cache_dtype(name):
            def _decorate(cls):
                _KV_CACHE_DTYPE_HANDLERS[name] = cls()
                return cls
            return _decorate

        def get_kv_cache_dtype_handler(name):
            return _KV_CACHE_DTYPE_HANDLERS.get(name)
    ''',
    "vllm/v1/kv_cache_interface.py": '''
        from enum import IntEnum

        from vllm.config.cache import get_kv_cache_dtype_handler

        class KVQuantMode(IntEnum):
            NONE = 0
            FP8_PER_TENSOR = 1
            TURBOQUANT_3BIT = 2

        def get_kv_quant_mode(kv_cache_dtype: str) -> KVQuantMode:
            handler = get_kv_cache_dtype_handler(kv_cache_dtype)
            if handler is not None:
                return handler.quant_mode()
            if isinstance(kv_cache_dtype, str) and kv_cache_dtype.startswith("turboquant_"):
                return KVQuantMode[kv_cache_dtype.upper()]
            if isinstance(kv_cache_dtype, str) and kv_cache_dtype.startswith("fp8"):
                return KVQuantMode.FP8_PER_TENSOR
            return KVQuantMode.NONE

        def is_quantized_kv_cache(kv_cache_dtype: str) -> bool:
            return get_kv_quant_mode(kv_cache_dtype) != KVQuantMode.NONE

        def supports_kv_cache_dtype(kv_cache_dtype) -> bool:
            if kv_cache_dtype is None:
                return True
            if is_quantized_kv_cache(kv_cache_dtype):
                return False
            return True
    ''',
}


@pytest.fixture(scope="module")
def folded() -> str:
    tree = SourceTree({p: textwrap.dedent(t).lstrip().encode() for p, t in SOURCES.items()})
    folder = Folder(tree, frozenset({"kv_cache_dtype"}), frozenset({"KVQuantMode"}), None)
    path = "vllm/v1/kv_cache_interface.py"
    found = folder.expr(ast.parse("supports_kv_cache_dtype(kv_cache_dtype)", mode="eval").body,
                        Scope(path, None, {}, {}))
    assert "_KV_CACHE_DTYPE_HANDLERS" in folder.assumed_used  # the assumption is stated in the registry
    return ast.unparse(found)


@pytest.mark.parametrize(("kv", "supported"), [
    (None, True), ("auto", True), ("bfloat16", True),
    ("fp8", False), ("fp8_e5m2", False), ("turboquant_3bit", False),  # quantized: refused
])
def test_an_empty_registry_and_an_enum_by_name_fold_to_a_condition(folded: str, kv: str | None,
                                                                    supported: bool) -> None:
    assert evaluate(folded, {"kv_cache_dtype": kv}) is supported
