"""The loader the container runs first: the in-image package imported from memory, in this process.

The program's own tests run it in a subprocess (tests/preflight/program.py); these call `run` and
the finder directly, with small packages written here, so what a container relies on - modules
that import each other as in a checkout, the program's arguments, its exit code, a traceback that
names the module - is checked where a failure shows."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from vllm_serving.preflight.loader import SourcesFinder, run

PACKAGE = "preflight_loader_test"
SOURCES = {
    "__init__": "",
    "report": "PASSED = 'preflight: passed'\n",
    "main": ("from .report import PASSED\n"
             "\n"
             "def main(argv):\n"
             "    print(PASSED, argv)\n"
             "    return len(argv)\n"),
    "broken": "\n\nraise ValueError('a bug in a check')\n",
}


@pytest.fixture
def clean_import_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test imports PACKAGE afresh and leaves no finder or module of it behind."""
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    yield
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


@pytest.mark.usefixtures("clean_import_state")
def test_the_program_runs_main_with_its_arguments_and_exits_with_its_code(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # `python3 -c PROGRAM --backend docker memory`: sys.argv is ["-c", "--backend", "docker", "memory"]
    monkeypatch.setattr(sys, "argv", ["-c", "--backend", "docker", "memory"])
    with pytest.raises(SystemExit) as exited:
        run(PACKAGE, SOURCES)
    assert exited.value.code == 3
    # main imported its sibling module relatively, as it does in a checkout
    assert capsys.readouterr().out == "preflight: passed ['--backend', 'docker', 'memory']\n"


@pytest.mark.usefixtures("clean_import_state")
def test_the_package_is_served_from_memory_and_nothing_else_is(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # a package of the same name on the image's path does not shadow the program's own modules
    shadow = tmp_path / PACKAGE
    shadow.mkdir()
    (shadow / "__init__.py").write_text("SHADOW = True\n")
    (shadow / "report.py").write_text("PASSED = 'from the image'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.meta_path.insert(0, SourcesFinder(PACKAGE, SOURCES))
    package = __import__(PACKAGE)
    report = __import__(f"{PACKAGE}.report", fromlist=["PASSED"])
    assert not hasattr(package, "SHADOW") and report.PASSED == "preflight: passed"
    assert hasattr(package, "__path__") and not hasattr(report, "__path__")  # a package, and its module
    assert report.__spec__.origin == f"{PACKAGE}/report.py"
    # a module the sources lack is missing, not found elsewhere; `__init__` is no module of its own
    for missing in ("absent", "__init__"):
        with pytest.raises(ModuleNotFoundError):
            __import__(f"{PACKAGE}.{missing}")


def test_the_finder_answers_only_for_its_package() -> None:
    finder = SourcesFinder(PACKAGE, SOURCES)
    assert finder.find_spec(PACKAGE + "_other") is None  # a name that merely starts like the package
    assert finder.find_spec("report") is None  # a module's bare name is not the package's module
    found = finder.find_spec(f"{PACKAGE}.main")
    assert found is not None and found.name == f"{PACKAGE}.main" and found.loader is finder


@pytest.mark.usefixtures("clean_import_state")
def test_a_traceback_names_the_module_and_line_it_came_from() -> None:
    # a check's bug must be findable: the frame says `preflight_loader_test/broken.py`, line 3
    sys.meta_path.insert(0, SourcesFinder(PACKAGE, SOURCES))
    with pytest.raises(ValueError, match="a bug in a check") as raised:
        __import__(f"{PACKAGE}.broken")
    last = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert (last.filename, last.lineno) == (f"{PACKAGE}/broken.py", 3)
