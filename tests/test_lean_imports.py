"""Start-up stays lean: each path imports only the provider package it uses, and a verb only its
own module (cli/verbs.py; the time it saves is benchmarks/startup.py's)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from pydantic import BaseModel

from tests.paths import PROJECT_DIR
from vllm_serving.cli.verbs import VERBS

PROBED = ("pulumi", "pulumi_docker", "pulumi_kubernetes", "httpx",
          *(f"vllm_serving.cli.{module}" for module, _ in VERBS.values()),
          "vllm_serving.scaffold", "vllm_serving.smoke", "vllm_serving.views.stack_diff")


def _imported(code: str) -> set[str]:
    """Which of PROBED a fresh interpreter has imported after running `code`."""
    probe = (code + f"; import sys; print('LOADED:' + ','.join(m for m in {PROBED!r} if m in sys.modules), "
             "file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT_DIR, capture_output=True, text=True,
                          check=False)
    marker = next(line for line in done.stderr.splitlines() if line.startswith("LOADED:"))
    return set(filter(None, marker.removeprefix("LOADED:").split(",")))


def test_offline_cli_imports_no_pulumi() -> None:
    assert _imported("from vllm_serving.cli import main; main(['plan', 'v100', '--json'])") & {
        "pulumi", "pulumi_docker", "pulumi_kubernetes"} == set()


@pytest.mark.parametrize(("argv", "own"), [
    (["plan", "v100", "--json"], {"vllm_serving.cli.plan"}),
    (["gpus"], {"vllm_serving.cli.catalogs"}),
])
def test_a_verb_loads_only_its_own_module(argv: list[str], own: set[str]) -> None:
    """`plan` never loads init's scaffold, smoke's HTTP client, diff or render: only what it runs."""
    loaded = _imported(f"from vllm_serving.cli import main; main({argv!r})")
    verbs = {m for m in loaded if m.startswith("vllm_serving.cli.")}
    assert verbs == own
    assert not loaded & {"httpx", "vllm_serving.scaffold", "vllm_serving.smoke", "vllm_serving.views.stack_diff"}


def test_help_lists_every_verb_without_loading_them(capsys: pytest.CaptureFixture[str]) -> None:
    loaded = _imported("from vllm_serving.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass")
    assert not {m for m in loaded if m.startswith("vllm_serving.cli.")} - {"vllm_serving.cli.verbs",
                                                                            "vllm_serving.cli.exits"}


def test_docker_program_does_not_import_kubernetes() -> None:
    assert _imported("import components.program, components.docker.vllm_deployment") & {
        "pulumi", "pulumi_docker", "pulumi_kubernetes"} == {"pulumi", "pulumi_docker"}


def _subclasses(cls: type[BaseModel]) -> list[type[BaseModel]]:
    return [cls, *(s for sub in cls.__subclasses__() for s in _subclasses(sub))]


def test_no_model_a_verb_builds_parses_its_own_source() -> None:
    """pydantic's use_attribute_docstrings reads and parses a model's module with `ast` when the
    class is built: for catalog/vision.py alone that was ~5% of `plan`'s start-up."""
    importlib.import_module("vllm_serving.cli.plan")
    importlib.import_module("vllm_serving.cli.check")
    built = [m for m in _subclasses(BaseModel) if m.__module__.startswith("vllm_serving.")]
    assert len(built) > 30  # the settings, the catalog and the release facts were imported
    assert [m.__qualname__ for m in built if m.model_config.get("use_attribute_docstrings")] == []


def test_the_core_builds_no_dataclass_at_start_up() -> None:
    """Records in the core are msgspec Structs, built in C: on CPython 3.11 a frozen dataclass
    compiles six methods when its module is imported (~4 M instructions each), and the ~70 that
    `plan` loaded had put it at 2.2x the pydantic+yaml floor (docs/development.md, "Start-up").
    `preflight/in_image/` is the exception: it runs inside the vLLM image on the standard library."""
    probe = ("from vllm_serving.cli import main; main(['plan', 'v100', '--json'])\n"
             "import components.program, components.docker.vllm_deployment, dataclasses, sys\n"
             "print('DATACLASSES:' + ','.join(f'{name}.{attr}' for name, module in list(sys.modules.items())\n"
             "    if name.startswith(('vllm_serving', 'components'))\n"
             "    and not name.startswith('vllm_serving.preflight.in_image') for attr, value in vars(module).items()\n"
             "    if isinstance(value, type) and value.__module__ == name and dataclasses.is_dataclass(value)),"
             " file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT_DIR, capture_output=True, text=True,
                          check=False)
    marker = next(line for line in done.stderr.splitlines() if line.startswith("DATACLASSES:"))
    assert marker.removeprefix("DATACLASSES:").split(",") == [""]
