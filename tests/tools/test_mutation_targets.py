"""`make mutation PACKAGE=...` mutates one package and runs that package's own tests only: the
tests mirror the source tree, so a mutant counts as killed only by the tests of its package."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.mutation.targets import also_copy, packages, target


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project laid out as this one: a core package, top-level modules, components, their tests."""
    for path in ("vllm_serving/__init__.py", "vllm_serving/observability/__init__.py",
                 "vllm_serving/observability/alerts.py", "vllm_serving/render/__init__.py",
                 "vllm_serving/render/compose_file.py", "vllm_serving/render/kubernetes/__init__.py",
                 "vllm_serving/spec.py", "vllm_serving/units.py", "vllm_serving/untested.py",
                 "components/__init__.py", "components/docker/__init__.py", "components/program.py",
                 "tests/observability/test_alerts.py", "tests/render/test_compose_file.py", "tests/test_spec.py",
                 "tests/test_units.py", "tests/test_units_more.py", "tests/test_unitsx.py", "tests/docker/test_x.py",
                 "tests/contracts/test_docker_schema.py", "tests/contracts/test_dockerx.py",
                 "tests/contracts/test_provider_schema.py",
                 "tests/test_program_waivers.py", "tests/test_program.py", "tests/test_promotion_program.py",
                 "Pulumi.yaml", "docs/testing.md",
                 ".venv/x", "mutants/x", ".git/HEAD"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    return tmp_path


@pytest.mark.parametrize(("name", "modules", "tests"), [
    ("observability", ("vllm_serving/observability/*",), ("tests/observability",)),
    ("spec", ("vllm_serving/spec.py",), ("tests/test_spec.py",)),
    # tests/test_<P>.py, tests/test_<P>_*.py and tests/test_*_<P>.py, not tests/test_<P>x.py (another package's)
    ("units", ("vllm_serving/units.py",), ("tests/test_units.py", "tests/test_units_more.py")),
    ("render/compose_file.py", ("vllm_serving/render/compose_file.py",), ("tests/render",)),
    ("render/kubernetes", ("vllm_serving/render/kubernetes/*",), ("tests/render",)),
    # components/<P> is also guarded by its provider contract, tests/contracts/test_<P>_*.py
    ("components/docker", ("components/docker/*",), ("tests/docker", "tests/contracts/test_docker_schema.py")),
    ("components/program", ("components/program.py",),
     ("tests/test_program.py", "tests/test_program_waivers.py", "tests/test_promotion_program.py")),
])
def test_a_package_is_mutated_against_its_own_tests(tree: Path, name: str, modules: tuple[str, ...],
                                                     tests: tuple[str, ...]) -> None:
    chosen = target(tree, name)
    assert (chosen.modules, chosen.tests) == (modules, tests)


def test_no_such_package_names_the_packages(tree: Path) -> None:
    with pytest.raises(ValueError, match="one of: observability, render, spec, units, untested, "
                                         "components/docker, components/program"):
        target(tree, "observabilty")
    with pytest.raises(ValueError, match="no tests of its own: expected tests/untested/"):
        target(tree, "untested")


def test_everything_but_the_sources_and_scratch_is_copied_for_the_tests(tree: Path) -> None:
    assert also_copy(tree) == ["Pulumi.yaml", "docs", "tests"]
    assert packages(tree) == ["observability", "render", "spec", "units", "untested", "components/docker",
                              "components/program"]


def test_survivors_are_run_again_only_over_the_source_they_were_named_in(tree: Path) -> None:
    # mutmut numbers mutants per function: after a source change, a recorded survivor's name may
    # name another mutant, so `--survivors-again` must refuse rather than score the wrong ones
    from tools.mutation.run import Score, check_unchanged, source_digest

    chosen = target(tree, "observability")
    before = source_digest(chosen, tree)
    (tree / "tests/observability/test_alerts.py").write_text("def test_more(): pass\n")
    (tree / "vllm_serving/spec.py").write_text("X = 2\n")
    assert source_digest(chosen, tree) == before  # tests and other packages may change
    recorded = Score(package="observability", date="2026-12-03", seed=1, sample=None, mutants=3,
                     uncovered=0, covered=3, killed=2, source_digest=before)
    check_unchanged(chosen, recorded, tree)
    (tree / "vllm_serving/observability/alerts.py").write_text("def f():\n    return 1\n")
    with pytest.raises(ValueError, match="source changed since its recorded run"):
        check_unchanged(chosen, recorded, tree)
    with pytest.raises(ValueError, match="recorded no digest"):
        check_unchanged(chosen, Score(**{**recorded.__dict__, "source_digest": ""}), tree)
