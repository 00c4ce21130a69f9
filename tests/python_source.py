"""Parse the project's Python files for tests that read the source (finding codes, cited lines).

With the garbage collector off: on CPython 3.11 a collection that runs finalizers while `ast.parse`
builds its objects can leave the AST constructor's recursion counter off, and the parse fails with
"SystemError: AST constructor recursion depth mismatch" (python/cpython#106905). Under xdist the
suite's earlier tests leave such garbage behind in the same worker.
"""

from __future__ import annotations

import ast
import gc
from pathlib import Path


def parse_source(path: Path) -> ast.Module:
    text = path.read_text(encoding="utf-8")
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(text)
    finally:
        if enabled:
            gc.enable()
