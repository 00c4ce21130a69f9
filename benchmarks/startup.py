"""Start-up cost of the program and the CLI: the CPU time of fresh interpreters (the best of RUNS,
so other load on the machine counts least), against the floor of pydantic and yaml, and which
heavy modules each path imports. Run with `make bench`; not a test (timings vary by machine).

Bytecode is cached as for any installed program (in a temporary PYTHONPYCACHEPREFIX, warmed by
one run first), even where PYTHONDONTWRITEBYTECODE is set: without it every run compiles every
module and the floor and the verbs compare compile times. The floor is what any verb that reads a
stack pays before doing anything of its own: pydantic and yaml imported and used once (one model
built and validated, one document parsed); bare `import pydantic` is lazy and loads almost none
of it, so it is printed beside but not the target. The target: `plan` within TARGET x the floor.

`--instructions` counts the instructions each path executes instead (valgrind's callgrind, one run
each, a few minutes): unlike CPU time they do not move with the machine's load, so two versions
compare exactly (docs/development.md, "Start-up").
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

RUNS = 15  # best of: at 7 one idle-machine run read `plan` at 2.2x the floor, where 15 read 1.8x twice
TARGET = 2.0
PROJECT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "project"
FLOOR = ("from pydantic import BaseModel; import yaml\n"
         "class Probe(BaseModel):\n    name: str\n"
         "Probe.model_validate(yaml.safe_load('name: x'))")
CASES = {
    "import pydantic, yaml (lazy)": "import pydantic, yaml",
    "floor: pydantic and yaml used": FLOOR,
    "cli plan (no pulumi)": f"from vllm_serving.cli import main; main(['--project-dir', {str(PROJECT)!r}, "
                            "'plan', 'v100', '--json'])",
    "cli check (one stack)": f"from vllm_serving.cli import main; main(['--project-dir', {str(PROJECT)!r}, "
                             "'check', 'v100'])",
    "cli capacity (one stack)": f"from vllm_serving.cli import main; main(['--project-dir', {str(PROJECT)!r}, "
                                "'capacity', 'v100'])",
    "cli gpus": "from vllm_serving.cli import main; main(['gpus'])",
    "program, docker backend imports": "import components.program, components.docker.vllm_deployment",
    "program, kubernetes backend imports": "import components.program, components.kubernetes.vllm_kubernetes",
}
HEAVY = ("pulumi", "pulumi_docker", "pulumi_kubernetes", "vllm_serving.render.kubernetes.objects")
"""Modules a path must not load for nothing: Pulumi outside the program, the Kubernetes renderer
for a Docker stack (every case above is one)."""


def _cached_bytecode_env(cache: str) -> dict[str, str]:
    """This environment, with bytecode written to and read from `cache` as an installed program's."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def _once(code: str, env: dict[str, str]) -> tuple[float, list[str], int]:
    probe = (code + f"\nimport sys as _s, time as _t; print('HEAVY:' + ','.join(m for m in {HEAVY!r} "
             "if m in _s.modules), sum(m.startswith('vllm_serving') for m in _s.modules), _t.process_time(), "
             "file=_s.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    marker = next(line for line in done.stderr.splitlines() if line.startswith("HEAVY:"))
    heavy, modules, seconds = marker.removeprefix("HEAVY:").rsplit(" ", 2)
    return float(seconds), heavy.split(","), int(modules)


def _instructions(code: str, env: dict[str, str]) -> float:
    """Instructions one run of `code` executes (callgrind's "Collected"), bytecode already cached."""
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env)
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           "-c", code], capture_output=True, text=True, check=True, env=env)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count: {done.stderr[-300:]}")
    return float(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructions", action="store_true", help="count instructions with valgrind")
    if parser.parse_args().instructions:
        count_instructions()
        return
    with tempfile.TemporaryDirectory(prefix="vllm-serving-bench-") as cache:
        env = _cached_bytecode_env(cache)
        best: dict[str, float] = {}
        for name, code in CASES.items():
            try:
                _once(code, env)  # writes the bytecode
                samples = [_once(code, env) for _ in range(RUNS)]
            except subprocess.CalledProcessError as exc:
                print(f"{name:<40} failed: {exc.stderr.strip().splitlines()[-1]}")
                continue
            best[name] = min(s for s, _, _ in samples)
            _, heavy, modules = samples[0]
            print(f"{name:<40} {best[name] * 1000:7.0f} ms CPU  {modules:3d} vllm_serving modules  "
                  f"heavy: {', '.join(filter(None, heavy)) or '-'}")
    floor, plan = best.get("floor: pydantic and yaml used"), best.get("cli plan (no pulumi)")
    if floor and plan:
        lazy = best.get("import pydantic, yaml (lazy)") or floor
        verdict = "within" if plan <= TARGET * floor else "OVER"
        print(f"plan / floor = {plan / floor:.1f}x ({verdict} the {TARGET:g}x target); "
              f"plan / bare `import pydantic, yaml` = {plan / lazy:.1f}x")


def count_instructions() -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="vllm-serving-bench-") as cache:
        env = _cached_bytecode_env(cache)
        counts = {name: _instructions(code, env) for name, code in CASES.items() if "lazy" not in name}
    floor = counts["floor: pydantic and yaml used"]
    for name, count in counts.items():
        print(f"{name:<40} {count / 1e6:9,.0f} M instructions  {count / floor:5.2f}x floor")
    plan = counts["cli plan (no pulumi)"]
    verdict = "within" if plan <= TARGET * floor else "OVER"
    print(f"plan / floor = {plan / floor:.2f}x ({verdict} the {TARGET:g}x target)")


if __name__ == "__main__":
    main()
