"""On Docker the program counts exactly the outgoing server's processes as released: the memory
check's own output (run here with faked torch and NVML, in-image code unchanged) judged again with
the host PIDs Docker lists for that container."""

from __future__ import annotations

import sys
import types

import pytest

from vllm_serving.preflight.in_image import memory
from vllm_serving.preflight.in_image.gpu_processes import GpuProcess
from vllm_serving.preflight.in_image.main import parse, run
from vllm_serving.preflight.server_memory import attributed
from vllm_serving.preflight.verdict import Verdict, read_verdict

GIB = 2**30
TOTAL = 32 * GIB
UUIDS = [f"4a7f0c2e-0000-4000-8000-00000000000{i}" for i in range(2)]


def _preflight(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], free: list[int],
               processes: list[tuple[int, int, int]], utilization: str) -> Verdict:
    """The memory check on a Docker host with these GPUs (free bytes) and processes (GPU, host pid,
    bytes), as the program reads its output back."""
    cuda = types.SimpleNamespace(
        is_available=lambda: True, device_count=lambda: len(free), mem_get_info=lambda i: (free[i], TOTAL),
        get_device_capability=lambda i: (7, 0), get_device_properties=lambda i: types.SimpleNamespace(uuid=UUIDS[i]))
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    listed = [GpuProcess(UUIDS[gpu], pid, "", used) for gpu, pid, used in processes]
    monkeypatch.setattr(memory, "gpu_processes", lambda: (listed, None))
    ok, lines = run(parse(["--backend", "docker", "--gpus", str(len(free)), "memory", "--", "--model", "/m",
                           "--gpu-memory-utilization", utilization]))
    return read_verdict(0 if ok else 1, capsys.readouterr().out + "\n".join(lines))


def test_a_foreign_process_as_large_as_a_server_is_not_taken_for_the_outgoing_one(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # a first deployment beside a 26 GiB training job: the container's guess takes it for the server
    verdict = _preflight(monkeypatch, capsys, [31 * GIB, 6 * GIB], [(1, 4242, 26 * GIB)], "0.8")
    assert verdict.passed and verdict.readings is not None
    exact = attributed(verdict, frozenset())  # Docker: no server running yet
    assert not exact.passed
    assert exact.report[0] == ("FAIL  memory  1 of 2 GPU(s) will have less free memory than 0.8 x total "
                               "(--gpu-memory-utilization): vLLM would refuse to start; the highest utilization "
                               "that would start is 0.18")
    # laid out as the container lays out a failure (in_image/main.py run)
    assert " " * 14 + "held by pid 4242 (not visible from this container) on GPU 1: 26.00 GiB" in exact.report
    assert exact.report[-1] == "preflight: FAILED (memory)"
    assert exact.report[-2].startswith("      fix: stop what holds the memory")


def test_the_outgoing_servers_processes_are_released_whatever_their_size(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the running server at 0.3 (a 9.6 GiB worker and its API server's 0.5 GiB context per GPU) is
    # replaced by one at 0.9: too small for the container's guess, which refuses
    processes = [(g, pid, size) for g in (0, 1) for pid, size in ((100, GIB // 2), (200 + g, int(9.6 * GIB)))]
    verdict = _preflight(monkeypatch, capsys, [int(21.9 * GIB)] * 2, processes, "0.9")
    assert not verdict.passed
    exact = attributed(verdict, frozenset({1, 100, 200, 201}))
    assert exact.passed, exact.report
    assert exact.report == ("ok    memory  2 GPU(s) have 0.9 x total free (--gpu-memory-utilization), once the "
                            "server being replaced stops on 2; least free at start: GPU 0 32.00/32.00 GiB",
                            "preflight: passed (1 checks)")


def test_only_the_outgoing_servers_processes_are_released(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    processes = [(0, 200, 20 * GIB), (0, 777, 4 * GIB)]  # the server's worker, and a notebook
    verdict = _preflight(monkeypatch, capsys, [7 * GIB, 31 * GIB], processes, "0.9")
    exact = attributed(verdict, frozenset({200}))
    assert not exact.passed
    details = [line.strip() for line in exact.report]
    assert "GPU 0: 7.00/32.00 GiB free, 27.00 once the server being replaced stops, 28.80 GiB needed (short)" in details
    assert "held by pid 200 (not visible from this container) on GPU 0: 20.00 GiB - the server being replaced's" \
        in details
    assert "held by pid 777 (not visible from this container) on GPU 0: 4.00 GiB" in details


def test_without_readings_the_verdict_is_the_containers(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    verdict = _preflight(monkeypatch, capsys, [31 * GIB] * 2, [], "0.8")  # nothing short: nothing to attribute
    assert verdict.readings is None and attributed(verdict, frozenset()) == verdict


# The container's report of a Docker host where GPU 0 (32 GiB) has 10 GiB free: the running server's
# worker (host pid 200) holds 20 GiB, a notebook (pid 777) 4 GiB; the new server asks 0.9 x 32 =
# 28.8 GiB. Written as in_image/main.py `run` lays it out (check names padded to `weights`, 7).
READINGS_LINE = ('memory readings: {"utilization": 0.9, "source": "--gpu-memory-utilization", '
                 f'"gpus": [[0, "{UUIDS[0]}", {10 * GIB}, {TOTAL}]], '
                 f'"processes": [["{UUIDS[0]}", 200, "", {20 * GIB}], ["{UUIDS[0]}", 777, "", {4 * GIB}]]}}')


def _container_report(curl: str, failed: str) -> str:
    return "\n".join([
        "ok    weights  config.json (Qwen3_5ForConditionalGeneration), 11 weight files, 50.1 GiB",
        "skip  engine   not run: vLLM v0.19.1: no step could run",
        READINGS_LINE,
        "FAIL  memory   (the container's own judgement, replaced)",
        "               GPU 0: 10.00/32.00 GiB free, 28.80 GiB needed (short)",
        "      fix: (the container's)",
        curl,
        f"preflight: FAILED ({failed})",
    ])


@pytest.mark.parametrize(("curl", "verdict"), [
    ("ok    curl     /usr/bin/curl", "preflight: passed (4 checks, not run: engine)"),
    ("FAIL  curl     no curl on the image's PATH: the healthcheck would never pass\n"
     "      fix: use an image with curl", "preflight: FAILED (curl)"),
])
def test_the_memory_line_is_replaced_in_place_among_the_other_checks(curl: str, verdict: str) -> None:
    container = read_verdict(1, _container_report(curl, "memory" + ", curl" * ("FAIL" in curl)))
    exact = attributed(container, frozenset({200}))
    # 10 + 20 = 30.00 GiB free at start >= 28.8: memory passes; the other checks' lines stay as they were
    assert exact.report == (
        "ok    weights  config.json (Qwen3_5ForConditionalGeneration), 11 weight files, 50.1 GiB",
        "skip  engine   not run: vLLM v0.19.1: no step could run",
        "ok    memory   1 GPU(s) have 0.9 x total free (--gpu-memory-utilization), once the server being "
        "replaced stops on 1; least free at start: GPU 0 30.00/32.00 GiB",
        *curl.splitlines(),
        verdict,
    )
    assert exact.passed is verdict.startswith("preflight: passed")


def test_a_memory_failure_keeps_the_columns_of_the_checks_around_it() -> None:
    container = read_verdict(1, _container_report("ok    curl     /usr/bin/curl", "memory"))
    exact = attributed(container, frozenset({4242}))  # the server being replaced is none of these
    # nothing released: 10.00 GiB free; floor(10/32 x 100) = 31 hundredths, ceil(0.31 x 32 GiB) = 9.92 GiB
    assert not exact.passed
    assert exact.report[2:7] == (
        "FAIL  memory   1 of 1 GPU(s) will have less free memory than 0.9 x total (--gpu-memory-utilization): "
        "vLLM would refuse to start; the highest utilization that would start is 0.31",
        "               GPU 0: 10.00/32.00 GiB free, 28.80 GiB needed (short)",
        "               held by pid 200 (not visible from this container) on GPU 0: 20.00 GiB",
        "               held by pid 777 (not visible from this container) on GPU 0: 4.00 GiB",
        "      fix: stop what holds the memory (nvidia-smi on the host names it), or lower "
        "vllm-serving:engine.gpuMemoryUtilization to 0.31 or less (less room for the KV cache: "
        "`vllm-stack capacity` shows what that leaves)",
    )
    assert exact.report[7:] == ("ok    curl     /usr/bin/curl", "preflight: FAILED (memory)")
