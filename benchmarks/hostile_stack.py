"""Hostile stack files against the strict loader: each is refused fast, with bounded memory.

Each case runs in a fresh interpreter that reads the file with `read_stack_file` (what every
`vllm-stack` verb starts with) and reports the wall time of the read, the peak of Python's
allocations (tracemalloc) and how far the process's peak RSS grew (resource.getrusage). The last
table is the whole `vllm-stack check`, interpreter start included.

Budget (issue 13): a hostile 1 MB stack file refused in under a second with bounded memory.
Budget (issue 22): `vllm-stack check` on any hostile input - the 1 MB file, the most extraArgs
the settings take (all unknown flags), thousands of them, a model.configFile that is a FIFO or
4 MB of nested JSON, hundreds of ssh options, host paths of every spelling - ends in under 2 s,
interpreter start included (the second table).
Run with `uv run python benchmarks/hostile_stack.py`; not a test (timings vary by machine).
"""

from __future__ import annotations

import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_SECONDS = 1.0
BUDGET_MIB = 32.0
CHECK_BUDGET_SECONDS = 2.0
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


def _engine(extra: str) -> str:
    return BASE.replace("  vllm-serving:engine:\n", f"  vllm-serving:engine:\n{extra}", 1)


def _check_cases() -> dict[str, tuple[str, dict[str, bytes | None]]]:
    """Whole-check cases: (stack file text, files beside it: bytes, or None for a FIFO)."""
    unknown = ", ".join(f'"--no-such-flag-{i:04d}=1"' for i in range(128))
    many = ", ".join(f'"--x{i}"' for i in range(20_000))
    config = BASE.replace("    name: Qwen3.5-27B\n", "    configFile: models/m/config.json\n")
    ssh = ", ".join(['"-CoProxyCommand=x"', '"-F"', '"/x"'] * 300)
    paths = f"    hostPath: /{'./' * 1000}etc/\n"
    return {
        "1 MB stack file": (BASE + "# " + "x" * 1_048_576 + "\n", {}),
        "128 unknown extraArgs (the cap)": (_engine(f"    extraArgs: [{unknown}]\n"), {}),
        "20,000 extraArgs (refused)": (_engine(f"    extraArgs: [{many}]\n"), {}),
        "model.configFile is a FIFO": (config, {"models/m/config.json": None}),
        "model.configFile: 4 MB nested JSON": (config, {"models/m/config.json": b"[" * 2_000_000 + b"]" * 2_000_000}),
        "900 ssh options": (BASE.replace("  vllm-serving:target:\n", "  vllm-serving:target:\n    dockerHost: "
                                         f"ssh://deploy@gpu01\n    sshOpts: [{ssh}]\n", 1), {}),
        "a 2 KB spelling of /etc as the cache": (BASE.replace("    hostPath: /u02/models/data/vllm-cache\n",
                                                              paths, 1), {}),
        "12,000 unknown keys in a section": (BASE.replace("    hostPort: 30006\n", "    hostPort: 30006\n" + "".join(
            f"    k{i:05d}x: 1\n" for i in range(12_000)), 1), {}),
        "6,000 waivers of unknown codes": (BASE + "  vllm-serving:waivers:\n" + "".join(
            f"    - {{code: a-b{i}, reason: r}}\n" for i in range(6_000)), {}),
        "safetensors header of 100,000 dims": (config, {"models/m/config.json": QWEN35_CONFIG,
                                                         "models/m/model.safetensors": _dims_header(100_000)}),
    }


QWEN35_CONFIG = (ROOT / "tests" / "fixtures" / "hf" / "qwen3.5-27b.config.json").read_bytes()


def _dims_header(dims: int) -> bytes:
    """A safetensors header whose one tensor has `dims` ten-digit dimensions (1 MB for 100,000)."""
    shape = ",".join(["9999999999"] * dims)
    raw = ('{"w": {"dtype": "BF16", "shape": [' + shape + '], "data_offsets": [0, 0]}}').encode()
    return struct.pack("<Q", len(raw)) + raw


def _check_seconds(project: Path, text: str, files: dict[str, bytes | None]) -> tuple[float, float, str]:
    """Wall and CPU seconds of `vllm-stack check` on the stack, in a fresh process (on a busy machine
    the wall time counts other processes too; CPU is the process's own), and its first finding."""
    for name, data in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        if data is None:
            os.mkfifo(path)
        else:
            path.write_bytes(data)
    stack = project / "Pulumi.hostile.yaml"
    stack.write_text(text, encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "vllm_serving.cli", "--project-dir", str(project), "check", "hostile"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    first = next((line for line in done.stdout.splitlines() if line.startswith("ERROR")), f"exit {done.returncode}")
    return elapsed, cpu, first[:90]


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
        print(f"budget: each read under {BUDGET_SECONDS:.0f} s and {BUDGET_MIB:.0f} MiB"
              + (f"; OVER: {', '.join(over)}" if over else "; all within"))
        print()
        print(f"{'vllm-stack check (whole process)':<38} {'bytes':>9} {'wall s':>7} {'CPU s':>6}  first finding")
        slow = []
        for name, (text, files) in _check_cases().items():
            seconds, cpu, first = _check_seconds(project, text, files)
            print(f"{name:<38} {len(text.encode()):>9} {seconds:>7.2f} {cpu:>6.2f}  {first}")
            if cpu > CHECK_BUDGET_SECONDS:
                slow.append(name)
        print(f"budget: each check under {CHECK_BUDGET_SECONDS:.0f} s of CPU" + (f"; OVER: {', '.join(slow)}" if slow
                                                                                else "; all within"))


if __name__ == "__main__":
    main()
