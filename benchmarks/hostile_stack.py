"""Hostile stack files against the strict loader: each is refused fast, with bounded memory.

Each case runs in a fresh interpreter that reads the file with `read_stack_file` (what every
`vllm-stack` verb starts with) and reports the wall time of the read, the peak of Python's
allocations (tracemalloc) and how far the process's peak RSS grew (resource.getrusage). The last
row is the whole `vllm-stack check --config-file` of the 1 MB file, interpreter start included.

Budget (issue 13): a hostile 1 MB stack file refused in under a second with bounded memory.
Run with `uv run python benchmarks/hostile_stack.py`; not a test (timings vary by machine).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_SECONDS = 1.0
BUDGET_MIB = 32.0
BASE = (ROOT / "Pulumi.v100.yaml").read_text(encoding="utf-8")

PROBE = """
import json, resource, sys, time, tracemalloc
from pathlib import Path
from vllm_serving.findings import ConfigError
from vllm_serving.stack_files.loader import read_stack_file
path = Path(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
start = time.perf_counter()
try:
    stack_file = read_stack_file(path, Path(sys.argv[2]))
    outcome = ",".join(f.code for f in stack_file.problems) or "read"
except ConfigError as exc:
    outcome = exc.findings[0].code
elapsed = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1]
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"outcome": outcome, "seconds": elapsed, "traced": peak, "rss_kib": grown}))
"""


def _cases() -> dict[str, str]:
    bomb = BASE + "  vllm-serving:extra:\n    a0: &a0 [" + ", ".join(['"lol"'] * 9) + "]\n"
    bomb += "".join(f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 9))
    return {
        "1 MB stack file (pasted log)": BASE + "# " + "x" * 1_048_576 + "\n",
        "1 MB of nested brackets": "config:\n  vllm-serving:engine:\n    extraArgs: "
                                   + "[" * 524_288 + "]" * 524_288 + "\n",
        "alias bomb (9^9 strings)": bomb,
        "100k nested brackets (200 KB)": BASE + "  vllm-serving:extra: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "4,000 distinct keys (240 KB, read)": BASE + "".join(f"  other{i}:key: {'v' * 40}\n" for i in range(4000)),
        "8,000 namespaces near the project's": BASE + "".join(f"  vllm-s{i:05d}:k: 1\n" for i in range(8000)),
        "duplicate key at the end (240 KB)": BASE + "".join(f"  o{i}:k: {'v' * 40}\n" for i in range(4000))
                                             + "  o0:k: again\n",
    }


def _probe(path: Path, project: Path) -> tuple[str, float, float, float]:
    """(outcome, seconds, peak traced MiB, RSS growth MiB) of reading `path` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", PROBE, str(path), str(project)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    r = json.loads(done.stdout.strip().splitlines()[-1])
    return str(r["outcome"]), float(r["seconds"]), int(r["traced"]) / 2**20, int(r["rss_kib"]) / 1024


def main() -> None:
    print(f"{'case':<38} {'bytes':>9} {'outcome':<26} {'seconds':>8} {'traced MiB':>10} {'RSS +MiB':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))
        over = []
        for name, text in _cases().items():
            path = project / "Pulumi.hostile.yaml"
            path.write_text(text, encoding="utf-8")
            outcome, seconds, traced, rss = _probe(path, project)
            print(f"{name:<38} {len(text.encode()):>9} {outcome:<26} {seconds:>8.3f} {traced:>10.2f} {rss:>9.2f}")
            if seconds > BUDGET_SECONDS or max(traced, rss) > BUDGET_MIB:
                over.append(name)
        path = project / "Pulumi.hostile.yaml"
        path.write_text(BASE + "# " + "x" * 1_048_576 + "\n", encoding="utf-8")
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "vllm_serving.cli", "--project-dir", str(project),
                               "check", "--config-file", str(path)], cwd=ROOT, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        first = next((line for line in done.stdout.splitlines() if line.startswith("ERROR")), "?")
        print(f"{'vllm-stack check, 1 MB (whole process)':<38} {path.stat().st_size:>9} "
              f"{'exit ' + str(done.returncode):<26} {elapsed:>8.3f}")
        print(f"  {first}")
    print(f"budget: each read under {BUDGET_SECONDS:.0f} s and {BUDGET_MIB:.0f} MiB"
          + (f"; OVER: {', '.join(over)}" if over else "; all within"))


if __name__ == "__main__":
    main()
