"""The first lines of the preflight program: they import the in-image package from memory.

The container gets one `python3 -c PROGRAM`: this file's text, verbatim, then `SOURCES`, the
sources of `vllm_serving/preflight/in_image/*.py` verbatim, one string per line, and
`run(PACKAGE, SOURCES)` (vllm_serving/preflight/command.py). A meta-path finder serves those modules under PACKAGE, so
they import each other as they do in a checkout, and nothing is written into the image.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType


class SourcesFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and loads `package` and `package.<name>` from `sources` (name -> source text)."""

    def __init__(self, package: str, sources: dict[str, str]) -> None:
        self.package = package
        self.sources = sources

    def _key(self, fullname: str) -> str | None:
        if fullname == self.package:
            return "__init__"
        prefix = self.package + "."
        name = fullname[len(prefix):] if fullname.startswith(prefix) else None
        return name if name in self.sources and name != "__init__" else None

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        key = self._key(fullname)
        if key is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=f"{self.package}/{key}.py",
                                               is_package=key == "__init__")

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        key = self._key(module.__name__)
        assert key is not None
        exec(compile(self.sources[key], f"{self.package}/{key}.py", "exec"), module.__dict__)


def run(package: str, sources: dict[str, str]) -> None:
    """Install the finder and run the package's `main` with the program's arguments."""
    sys.meta_path.insert(0, SourcesFinder(package, sources))
    main = importlib.import_module(f"{package}.main")
    sys.exit(main.main(sys.argv[1:]))
