"""`vllm-stack check` over 200 stacks, and the CLI's start: median wall time of fresh interpreters,
plus how many vLLM release registries each run loaded (they load lazily, one version at a time).

Budget (issue 12): check over 200 stacks under 3 s on a laptop-class CPU; the CLI's start under 1 s.
Run with `make bench`; not a test (timings vary by machine).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5
STACKS = 200
BUDGET_SECONDS = {"check over 200 stacks": 3.0, "cli start (--help)": 1.0, "check one stack": 1.0}
PROBE = ("import sys; from vllm_serving.cli import main; rc = main(sys.argv[1:]); "
         "from vllm_serving.engine import release_registry as r; "
         "print('LOADED:' + str(r._load.cache_info().currsize), file=sys.stderr); sys.exit(rc)")


def _project(tmp: Path) -> Path:
    """A project holding 200 stack files: the shipped Docker and Kubernetes stacks, copied round robin."""
    project = tmp / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    sources = sorted(p for p in ROOT.glob("Pulumi.*.yaml")
                     if "promoteFrom" not in p.read_text(encoding="utf-8"))
    for i in range(STACKS):
        source = sources[i % len(sources)]
        shutil.copy(source, project / f"Pulumi.s{i:03d}-{source.name.split('.')[1]}.yaml")
    return project


def _once(argv: list[str]) -> tuple[float, str, int]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - start
    # --help exits inside argparse, before the probe prints: no registry was needed
    loaded = next((line.removeprefix("LOADED:") for line in done.stderr.splitlines()
                   if line.startswith("LOADED:")), "0")
    return elapsed, loaded, done.returncode


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = _project(Path(tmp))
        cases = {
            "cli start (--help)": ["--help"],
            "check one stack": ["--project-dir", str(project), "check", "s000-" + sorted(
                p.name for p in project.glob("Pulumi.s000-*.yaml"))[0].split("-", 1)[1][:-5]],
            "check over 200 stacks": ["--project-dir", str(project), "check"],
        }
        print(f"{'case':<26} {'median':>9} {'budget':>8}  registries loaded, exit code")
        for name, argv in cases.items():
            samples = [_once(argv) for _ in range(RUNS)]
            median = statistics.median(s for s, _, _ in samples)
            verdict = "ok" if median <= BUDGET_SECONDS[name] else "OVER"
            print(f"{name:<26} {median:8.2f}s {BUDGET_SECONDS[name]:7.1f}s  {samples[0][1]:>3}  "
                  f"exit {samples[0][2]}  {verdict}")


if __name__ == "__main__":
    main()
