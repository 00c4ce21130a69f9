"""What one mutation run covers: the modules of one package and that package's own tests.

Tests mirror the source tree, so a package's own tests are found by its name alone:
`vllm_serving/<P>/` (or `vllm_serving/<P>.py`) is tested by `tests/<P>/`, `tests/test_<P>.py`,
`tests/test_<P>_*.py` and `tests/test_*_<P>.py` (`tests/test_promotion_program.py` is the program's);
`components/<P>` likewise, and also by the provider contracts named after it,
`tests/contracts/test_<P>_*.py` (the program's resources read against the provider's published
schema: `test_docker_schema.py`, `test_kubernetes_objects.py`). A mutant counts as killed only when those tests
kill it: a test elsewhere that happens to notice does not guard the package (issue 28).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SOURCE_ROOTS = ("vllm_serving", "components")
"""What mutmut copies and may mutate; every other top-level entry is copied as it is."""
NOT_COPIED = frozenset({".git", ".venv", ".tools", "mutants", "out", ".mypy_cache", ".pytest_cache",
                        ".ruff_cache", ".hypothesis", "__pycache__", ".benchmarks"})
"""Top-level entries a test run never reads: caches, the environment, mutmut's own scratch."""


@dataclass(frozen=True)
class Target:
    """One package (or one module of it) to mutate, and the tests that must kill its mutants."""

    name: str
    """As `make mutation PACKAGE=` takes it: `observability`, `spec`, `render/compose_file.py`,
    `components/docker`."""
    modules: tuple[str, ...]
    """mutmut's `only_mutate` patterns (fnmatch, relative to the repository root)."""
    tests: tuple[str, ...]
    """The test selection: the package's own test folder and files."""


def _split(name: str) -> tuple[str, str]:
    """`components/docker` -> ("components", "docker"); `render/x.py` -> ("vllm_serving", "render/x.py")."""
    head, _, rest = name.strip("/").partition("/")
    if head in SOURCE_ROOTS and rest:
        return head, rest
    return SOURCE_ROOTS[0], name.strip("/")


def own_tests(root: Path, package: str) -> tuple[str, ...]:
    """`tests/<package>/`, `tests/test_<package>.py`, `tests/test_<package>_*.py` and
    `tests/test_*_<package>.py` that exist."""
    tests = root / "tests"
    found = [f"tests/{package}"] if (tests / package).is_dir() else []
    patterns = (f"test_{package}.py", f"test_{package}_*.py", f"test_*_{package}.py")
    files = {path for pattern in patterns for path in tests.glob(pattern)}
    return (*found, *sorted(f"tests/{f.name}" for f in files))


def contracts(root: Path, package: str) -> tuple[str, ...]:
    """`tests/contracts/test_<package>_*.py` that exist: what a component registers, checked against
    the provider's own schema, is that component's to guard."""
    found = (root / "tests" / "contracts").glob(f"test_{package}_*.py")
    return tuple(sorted(f"tests/contracts/{f.name}" for f in found))


def target(root: Path, name: str) -> Target:
    """The modules and own tests of `name`; ValueError naming the packages when it is none."""
    source_root, inside = _split(name)
    path = root / source_root / inside
    if path.is_dir() and (path / "__init__.py").exists():
        modules: tuple[str, ...] = (f"{source_root}/{inside}/*",)
    elif path.suffix == ".py" and path.is_file():
        modules = (f"{source_root}/{inside}",)
    elif path.with_suffix(".py").is_file():
        modules = (f"{source_root}/{inside}.py",)
    else:
        raise ValueError(f"'{name}' is no package or module; one of: {', '.join(packages(root))}")
    package = inside.split("/")[0].removesuffix(".py")
    tests = own_tests(root, package)
    if source_root == SOURCE_ROOTS[1]:
        tests = (*tests, *contracts(root, package))
    if not tests:
        raise ValueError(f"'{name}' has no tests of its own: expected tests/{package}/ or tests/test_{package}*.py")
    return Target(name.strip("/"), modules, tests)


def packages(root: Path) -> list[str]:
    """Every package and top-level module of the core and of components/, as PACKAGE names."""
    names: list[str] = []
    for source_root in SOURCE_ROOTS:
        prefix = "" if source_root == SOURCE_ROOTS[0] else f"{source_root}/"
        for entry in sorted((root / source_root).iterdir()):
            if entry.is_dir() and (entry / "__init__.py").exists():
                names.append(prefix + entry.name)
            elif entry.suffix == ".py" and entry.name != "__init__.py":
                names.append(prefix + entry.stem)
    return names


def also_copy(root: Path) -> list[str]:
    """Every top-level entry besides the sources, so tests find the files they read (stack files,
    docs, fixtures, tools) in mutmut's copy exactly as in the repository."""
    return sorted(entry.name for entry in root.iterdir()
                  if entry.name not in NOT_COPIED and entry.name not in SOURCE_ROOTS)
