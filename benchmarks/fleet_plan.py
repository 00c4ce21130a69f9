"""Planning a 32-host Docker fleet against planning one host: settings, resolve, rules, planner.

Each case is what `vllm-stack plan` computes after reading the stack file: parse the config,
resolve the catalogs, run the rules (per host for the fleet), build the plan (capacity
included). The fleet runs the one-server rules once per group of hosts with the same GPUs and
computes the capacity plan once (vllm_serving/rules/fleet.py, vllm_serving/views/fleet.py); the
"no sharing" row runs everything for every host, for comparison. The last rows time the whole
`vllm-stack plan` in a fresh interpreter.

Budget (issue 16): the 32-host fleet within 2x of one host. Run with
`uv run python benchmarks/fleet_plan.py`; not a test (timings vary by machine).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from vllm_serving.fleet import fleet_hosts
from vllm_serving.rules import check
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import resolve
from vllm_serving.stack_files.loader import read_stack_file
from vllm_serving.views.fleet import fleet_plan
from vllm_serving.views.plan import deployment_plan

ROOT = Path(__file__).resolve().parent.parent
HOSTS = 32
RUNS = 200
CLI_RUNS = 5
BUDGET = 2.0
TARGET = "vllm-serving:target"


def _values(hosts: int) -> dict[str, Any]:
    """Pulumi.a100.yaml's config on one ssh host, or as a fleet of `hosts` (the same GPUs each)."""
    values = dict(read_stack_file(ROOT / "Pulumi.a100.yaml", ROOT).values)
    if hosts == 1:
        values[TARGET] = {"kind": "docker", "dockerHost": "ssh://deploy@gpu00.example.internal"}
    else:
        values[TARGET] = {"kind": "docker", "hosts": [
            {"dockerHost": f"ssh://deploy@gpu{i:02d}.example.internal"} for i in range(hosts)]}
    return values


def _plan(values: dict[str, Any]) -> dict[str, Any]:
    spec = resolve(parse_stack_config(values), "bench", project_dir=ROOT)
    findings = check(spec)
    hosts = fleet_hosts(spec)
    return fleet_plan(spec, hosts, findings) if hosts else deployment_plan(spec, findings)


def _plan_unshared(values: dict[str, Any]) -> None:
    """Every host as its own stack: the rules and the whole plan once per host."""
    spec = resolve(parse_stack_config(values), "bench", project_dir=ROOT)
    for host in fleet_hosts(spec):
        deployment_plan(host.spec, check(host.spec))


def _median(work: Callable[[], object], runs: int) -> float:
    work()  # warm: imports, the release registry, the catalogs
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _cli(path: Path) -> float:
    samples = []
    for _ in range(CLI_RUNS):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "vllm_serving.cli", "--project-dir", str(ROOT), "plan",
                               str(path)], capture_output=True, text=True, cwd=ROOT)
        samples.append(time.perf_counter() - start)
        assert done.returncode == 0, done.stderr
    return statistics.median(samples)


def main() -> None:
    one, fleet = _values(1), _values(HOSTS)
    rows = {
        "one host": _median(lambda: _plan(one), RUNS),
        f"{HOSTS} hosts": _median(lambda: _plan(fleet), RUNS),
        f"{HOSTS} hosts, no sharing": _median(lambda: _plan_unshared(fleet), RUNS // 10),
    }
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, values in (("one", one), ("fleet", fleet)):
            files[name] = Path(tmp) / f"Pulumi.{name}.yaml"
            files[name].write_text(yaml.safe_dump({"config": values}), encoding="utf-8")
        rows["vllm-stack plan, one host"] = _cli(files["one"])
        rows[f"vllm-stack plan, {HOSTS} hosts"] = _cli(files["fleet"])
    base = rows["one host"]
    cli_base = rows["vllm-stack plan, one host"]
    print(f"{'case':<32} {'median':>10}  x one host")
    for name, seconds in rows.items():
        ratio = seconds / (cli_base if name.startswith("vllm-stack") else base)
        print(f"{name:<32} {seconds * 1000:8.2f}ms  {ratio:5.2f}x")
    ratio = rows[f"{HOSTS} hosts"] / base
    print(f"budget: {HOSTS} hosts within {BUDGET}x of one host: {'ok' if ratio <= BUDGET else 'OVER'} ({ratio:.2f}x)")


if __name__ == "__main__":
    main()
