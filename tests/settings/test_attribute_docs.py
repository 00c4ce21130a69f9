"""A config error quotes the key's documentation, read from the source with `ast.parse`; CPython
3.11 refuses `ast.parse` in a thread after a RecursionError there ('AST constructor recursion depth
mismatch'), which a hostile file's nesting provokes: the message must still be made."""

from __future__ import annotations

import ast
import threading
from typing import Any

import pytest

from vllm_serving.settings import base
from vllm_serving.settings.engine import EngineSettings


def test_docs_are_read_even_where_ast_parse_fails_in_this_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    base.attribute_docs.cache_clear()
    here = threading.get_ident()
    real = ast.parse

    def broken_here(*args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == here and "class " in str(args[0])[:200]:
            raise SystemError("AST constructor recursion depth mismatch (before=216, after=267)")
        return real(*args, **kwargs)

    monkeypatch.setattr(base.ast, "parse", broken_here)
    docs = base.attribute_docs(EngineSettings)
    base.attribute_docs.cache_clear()
    assert "--max-model-len" in docs["max_model_len"]


def test_a_parse_that_fails_in_every_thread_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    # boundary twin: the retry is for the thread-state bug only, not a blanket catch
    base.attribute_docs.cache_clear()
    real = ast.parse

    def broken(*args: Any, **kwargs: Any) -> Any:
        if "class " in str(args[0])[:200]:
            raise SystemError("broken everywhere")
        return real(*args, **kwargs)

    monkeypatch.setattr(base.ast, "parse", broken)
    with pytest.raises(SystemError):
        base.attribute_docs(EngineSettings)
    base.attribute_docs.cache_clear()
