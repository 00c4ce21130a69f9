"""Mutation testing of one package against its own tests, sampled with a recorded seed.

    python -m tools.mutation.run PACKAGE [--sample N] [--seed S] [--max-children 2]
    python -m tools.mutation.run PACKAGE --survivors-again


mutmut (3.x) reads its configuration from pyproject.toml only; this sets the two fields that make
a run per package (`only_mutate`: the package's modules; the test selection: its own tests, see
targets.py) on mutmut's loaded configuration, then drives mutmut's own steps: generate the
mutants, record which tests reach which function, sample N of the mutants some own test reaches
(`random.Random(seed)` over their sorted names, so a seed names the same sample on every machine),
run them, and print the score (killed / covered mutants sampled) and every survivor's diff.

`--survivors-again` runs only the survivors of the package's last recorded run, after tests were
added for them, and records that run's score with the survivors now killed: a test added can
only kill more, so the other mutants' verdicts stand. It refuses when the package's source
changed since (`source_digest`): mutmut numbers mutants per function, so a changed module renames them.

It writes only under mutants/ (mutmut's copy, emptied first: results of another package's run
must not leak in) and the report, out/mutation.json (one entry per package, the latest run).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import random
import shutil
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import mutmut.__main__ as mutmut_main
from mutmut import configuration
from mutmut.mutation.data import SourceFileMutationData
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.mutation.trampoline import set_mutant_under_test
from mutmut.state import state
from mutmut.stats import save_stats, status_by_exit_code
from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths, walk_mutatable_files
from mutmut.utils.format_utils import mangled_name_from_mutant_name
from mutmut.workers.isolation import get_mutant_runner

from tools.mutation.targets import SOURCE_ROOTS, Target, also_copy, packages, target

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "out" / "mutation.json"
PRELOAD = ("pydantic", "yaml", "httpx", "hypothesis", "jsonschema", "kubernetes_validate", "pulumi",
           "pulumi.runtime.mocks", "pulumi_docker", "pulumi_kubernetes")
"""Third-party modules the fork server imports once when survivors are run again. The project's own
modules are not among them: each survivor imports them afresh, so a mutant in a function that
builds a module-level table (`ROWS = (latency(...), ...)`) is live in its tables too. (The first
pass forks from a server that collected the tests, so the tables were built before any mutant
was active: fast, but blind to those mutants.)"""
KILLED = frozenset({"killed", "timeout"})
"""A timeout is a kill: the mutant made the package's tests hang past mutmut's CPU budget."""


@dataclass
class Score:
    package: str
    date: str
    seed: int
    sample: int | None
    """The sample size asked for; None: every covered mutant."""
    mutants: int
    """All mutants of the package's modules."""
    uncovered: int
    """Mutants in functions no own test reaches (mutmut's `no tests`): never run, not in the score."""
    covered: int
    """Mutants run (the sample, or all covered ones)."""
    killed: int
    survivors: dict[str, str] = field(default_factory=dict)
    """Mutant name -> its status (survived, suspicious, ...)."""
    unreached: list[str] = field(default_factory=list)
    """The functions whose mutants no own test reaches."""
    source_digest: str = ""
    """sha256 of the mutated modules' text: the mutant names hold only for this source."""
    survivors_again: int = 0
    """How many times the survivors were run again after tests were added for them."""

    @property
    def percent(self) -> float:
        return 100.0 * self.killed / self.covered if self.covered else 100.0


def source_digest(chosen: Target, root: Path = ROOT) -> str:
    """sha256 over the mutated modules (path and text, in path order)."""
    digest = hashlib.sha256()
    for path in sorted({p for pattern in chosen.modules for p in root.glob(pattern) if p.suffix == ".py"}):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def configure(chosen: Target) -> None:
    """mutmut's configuration from pyproject.toml, narrowed to `chosen`."""
    cfg = configuration.config()
    cfg.source_paths = [Path(p) for p in SOURCE_ROOTS]
    cfg.resolved_mutated_source_paths = [ROOT / "mutants" / p for p in SOURCE_ROOTS]
    cfg.also_copy = [Path(p) for p in also_copy(ROOT)]
    cfg.only_mutate = list(chosen.modules)
    cfg.pytest_add_cli_args_test_selection = list(chosen.tests)
    cfg.forkserver_warmup = configuration.ForkServerWarmup.COLLECT
    cfg.preload_modules_file = str(ROOT / "mutants" / "preload-modules.txt")


def all_mutants() -> dict[str, SourceFileMutationData]:
    """Every mutant of the package -> the data of the file it is in."""
    found: dict[str, SourceFileMutationData] = {}
    for path in walk_mutatable_files():
        data = SourceFileMutationData(path=path)
        data.load()
        found.update({name: data for name in data.exit_code_by_key})
    return found


def covered(names: Sequence[str]) -> list[str]:
    """The mutants some selected test reaches (from mutmut's recorded stats)."""
    reached = state().tests_by_mangled_function_name
    return [n for n in names if reached.get(mangled_name_from_mutant_name(n))]


def prepare(max_children: int) -> None:
    """Generate the mutants and record which tests reach which function (mutmut's first steps)."""
    set_mutant_under_test("mutant_generation")
    (ROOT / "mutants").mkdir()
    Path(configuration.config().preload_modules_file or "").write_text("\n".join(PRELOAD) + "\n")
    copy_src_dir()
    copy_also_copy_files()
    setup_source_paths()
    mutmut_main.create_mutants(max_children)
    mutmut_main.collect_or_load_stats(get_mutant_runner(max_children))


def _statuses(names: Sequence[str]) -> dict[str, str]:
    results = all_mutants()
    return {n: status_by_exit_code[results[n].exit_code_by_key[n]] for n in names}


def _against_every_own_test(survivors: Sequence[str]) -> None:
    """Run `survivors` again, each importing the project afresh under its mutant (PRELOAD), against
    every own test: mutmut records a call made while a module is imported (a module-level table)
    against whichever test happened to import it first, which may not be a test that reads it."""
    everything = set(state().duration_by_test)
    for name in survivors:
        state().tests_by_mangled_function_name[mangled_name_from_mutant_name(name)] = set(everything)
    save_stats()
    configuration.config().forkserver_warmup = configuration.ForkServerWarmup.IMPORT


def run(chosen: Target, sample: int | None, seed: int, max_children: int) -> Score:
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    prepare(max_children)
    names = sorted(all_mutants())
    reached = covered(names)
    picked = reached if sample is None or sample >= len(reached) else random.Random(seed).sample(reached, sample)
    statuses = _both_passes(picked, max_children)
    return Score(
        package=chosen.name, date=datetime.date.today().isoformat(), seed=seed, sample=sample,
        mutants=len(names), uncovered=len(names) - len(reached), covered=len(picked),
        killed=sum(s in KILLED for s in statuses.values()),
        survivors={n: s for n, s in sorted(statuses.items()) if s not in KILLED},
        unreached=sorted({mangled_name_from_mutant_name(n) for n in set(names) - set(reached)}),
        source_digest=source_digest(chosen),
    )


def _both_passes(picked: Sequence[str], max_children: int) -> dict[str, str]:
    """Each mutant's status: run from the collected tests, the survivors again importing afresh."""
    if picked:
        mutmut_main._run(sorted(picked), max_children)
    statuses = _statuses(picked)
    survivors = sorted(n for n, status in statuses.items() if status not in KILLED)
    if survivors:
        _against_every_own_test(survivors)
        mutmut_main._run(survivors, max_children)
        statuses |= _statuses(survivors)
    return statuses


def check_unchanged(chosen: Target, previous: Score, root: Path = ROOT) -> None:
    """ValueError when the source `previous`'s mutants were named in has changed since."""
    if not previous.source_digest or previous.source_digest != source_digest(chosen, root):
        raise ValueError(f"{chosen.name}'s source changed since its recorded run (or that run recorded no "
                         "digest): its mutants are named afresh, so run a sample again")


def survivors_again(chosen: Target, previous: Score, max_children: int) -> Score:
    """`previous`'s survivors run again (check_unchanged first): its score with those now killed."""
    shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    prepare(max_children)
    statuses = _both_passes(sorted(previous.survivors), max_children)
    newly = sum(s in KILLED for s in statuses.values())
    return Score(**{**asdict(previous), "date": datetime.date.today().isoformat(),
                    "killed": previous.killed + newly,
                    "survivors": {n: s for n, s in sorted(statuses.items()) if s not in KILLED},
                    "survivors_again": previous.survivors_again + 1})


def recorded(package: str) -> Score:
    """The package's last run as out/mutation.json keeps it; ValueError when there is none."""
    saved = json.loads(REPORT.read_text(encoding="utf-8")) if REPORT.exists() else {}
    if package not in saved:
        raise ValueError(f"no recorded run of {package} in {REPORT.relative_to(ROOT)}: run it first")
    entry = saved[package]
    return Score(**{f: entry[f] for f in Score.__dataclass_fields__ if f in entry})


def report(score: Score, chosen: Target) -> str:
    lines = [
        "",
        f"mutation score of {score.package}: {score.killed}/{score.covered} covered mutants killed"
        f" ({score.percent:.1f}%), by {' '.join(chosen.tests)}",
        f"  {score.mutants} mutants, {score.uncovered} in functions no own test reaches;"
        f" sample {score.sample or 'all'}, seed {score.seed}"
        + (f"; survivors run again {score.survivors_again}x" if score.survivors_again else ""),
    ]
    lines += [f"  unreached: {name}" for name in score.unreached]
    for name, status in score.survivors.items():
        lines += ["", f"{status}: {name}", get_diff_for_mutant(name, path=all_mutants()[name].path).rstrip()]
    return "\n".join(lines)


def save(score: Score) -> None:
    REPORT.parent.mkdir(exist_ok=True)
    saved = json.loads(REPORT.read_text(encoding="utf-8")) if REPORT.exists() else {}
    saved[score.package] = asdict(score) | {"percent": round(score.percent, 1)}
    REPORT.write_text(json.dumps(saved, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", nargs="?",
                        help="e.g. observability, spec, render/compose_file.py, components/docker")
    parser.add_argument("--sample", type=int, default=None, help="mutants to run (default: every covered one)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--survivors-again", action="store_true",
                        help="run only the last recorded run's survivors (the source unchanged since)")
    args = parser.parse_args(argv)
    os.chdir(ROOT)  # mutmut reads pyproject.toml and writes mutants/ relative to the working directory
    if not args.package:
        print("make mutation PACKAGE=<one of>: " + " ".join(packages(ROOT)), file=sys.stderr)
        return 2
    try:
        chosen = target(ROOT, args.package)
        previous = recorded(chosen.name) if args.survivors_again else None
        if previous is not None:
            check_unchanged(chosen, previous)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    configure(chosen)
    if previous is not None:
        score = survivors_again(chosen, previous, args.max_children)
    else:
        score = run(chosen, args.sample or None, args.seed, args.max_children)
    save(score)
    print(report(score, chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
