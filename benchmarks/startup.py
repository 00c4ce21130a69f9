"""Start-up cost of the program and the CLI: median wall time of fresh interpreters, and which
heavy modules each path imports. Run with `make bench`; not a test (timings vary by machine)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 7
CASES = {
    "cli plan (no pulumi)": "import sys; from vllm_serving.cli import main; "
    "rc = main(['plan','v100','--json']); rc and sys.exit(rc)",
    "program, docker backend imports": "import components.program, components.docker.vllm_deployment",
    "program, kubernetes backend imports": "import components.program, components.kubernetes.vllm_kubernetes",
}
HEAVY = ("pulumi", "pulumi_docker", "pulumi_kubernetes")


def _once(code: str) -> tuple[float, list[str]]:
    probe = code + (f"; import sys as _s; print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in _s.modules),"
                    " file=_s.stderr)")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - start
    marker = next(line for line in done.stderr.splitlines() if line.startswith("HEAVY:"))
    return elapsed, marker.removeprefix("HEAVY:").split(",")


def main() -> None:
    for name, code in CASES.items():
        try:
            samples = [_once(code) for _ in range(RUNS)]
        except subprocess.CalledProcessError as exc:
            print(f"{name:<40} failed: {exc.stderr.strip().splitlines()[-1]}")
            continue
        median = statistics.median(s for s, _ in samples)
        print(f"{name:<40} {median * 1000:7.0f} ms  imports: {', '.join(filter(None, samples[0][1])) or '-'}")


if __name__ == "__main__":
    main()
