"""The `memory` check against faked free-memory readings: vLLM's own start-up test (free memory >=
ceil(utilization x total) on every GPU it takes), what holds the memory, the highest utilization
that would start, and on Docker the memory the server being replaced releases at cut-over."""

from __future__ import annotations

import math
import os
import stat
import sys
import types
from pathlib import Path

import pytest

from vllm_serving.preflight.in_image import memory
from vllm_serving.preflight.in_image.gpu_processes import GpuProcess, from_nvidia_smi
from vllm_serving.preflight.in_image.main import parse, run
from vllm_serving.preflight.in_image.memory import GpuMemory, highest_starting, requested

GIB = 2**30
TOTAL = 34_359_738_368  # a 32 GiB V100 as cudaMemGetInfo reports it
UUIDS = [f"4a7f0c2e-0000-4000-8000-00000000000{i}" for i in range(8)]


def _fake_torch(monkeypatch: pytest.MonkeyPatch, free: list[int], capability: tuple[int, int] = (7, 0)) -> None:
    cuda = types.SimpleNamespace(
        is_available=lambda: True, device_count=lambda: len(free),
        mem_get_info=lambda i: (free[i], TOTAL), get_device_capability=lambda i: capability,
        get_device_properties=lambda i: types.SimpleNamespace(uuid=UUIDS[i]))
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda, __version__="2.10.0"))


def _fake_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, csv: str) -> None:
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ncat <<'EOF'\n{csv}EOF\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")


def _memory(*options: str, argv: tuple[str, ...] = ("--gpu-memory-utilization", "0.8"),
            backend: str = "kubernetes") -> tuple[bool, list[str]]:
    return run(parse(["--backend", backend, "--gpus", "8", *options, "memory", "--", "--model", "/m", *argv]))


@pytest.fixture(autouse=True)
def _no_pynvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # as if not installed: nvidia-smi lists, where faked


def test_enough_free_memory_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_torch(monkeypatch, [30 * GIB] * 7 + [28 * GIB])
    ok, lines = _memory()
    assert ok, lines
    assert lines[0] == ("ok    memory  8 GPU(s) have 0.8 x total free (--gpu-memory-utilization); "
                        "least free at start: GPU 7 28.00/32.00 GiB")


def test_memory_another_process_holds_fails_with_who_holds_it(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    # Kubernetes: the old pod is gone before the init container runs; what is held now is held at start
    # another model's server kept 20 GiB of GPU 3 and 6 GiB of GPU 5; a process on a GPU not taken is left out
    _fake_torch(monkeypatch, [31 * GIB] * 3 + [11 * GIB, 31 * GIB, 26 * GIB, 31 * GIB, 31 * GIB])
    _fake_nvidia_smi(monkeypatch, tmp_path, f"GPU-{UUIDS[3].upper()}, 4242, /usr/bin/python3, 20480\n"
                                            f"GPU-{UUIDS[5]}, 77, [Not Found], 6144\n"
                                            "GPU-ffffffff-0000-4000-8000-000000000009, 99, other, 1000\n")
    ok, lines = _memory()
    assert not ok
    assert lines[0] == ("FAIL  memory  1 of 8 GPU(s) will have less free memory than 0.8 x total "
                        "(--gpu-memory-utilization): vLLM would refuse to start; the highest utilization that "
                        "would start is 0.34")
    # laid out under the message: "FAIL  " (6) + "memory" (6) + 2 spaces, the fix under the status
    assert all(line[:14] == " " * 14 and line[14] != " " for line in lines[1:-2])
    assert lines[-2].startswith(" " * 6 + "fix: ")
    details = [line.strip() for line in lines[1:-2]]
    assert details[3] == "GPU 3: 11.00/32.00 GiB free, 25.60 GiB needed (short)"
    assert details[5] == "GPU 5: 26.00/32.00 GiB free, 25.60 GiB needed"
    assert details[8:] == ["held by pid 4242 (/usr/bin/python3) on GPU 3: 20.00 GiB",
                           "held by pid 77 ([Not Found]) on GPU 5: 6.00 GiB"]
    assert lines[-2].strip() == ("fix: stop what holds the memory (nvidia-smi on the host names it), or lower "
                                 "vllm-serving:engine.gpuMemoryUtilization to 0.34 or less (less room for the KV "
                                 "cache: `vllm-stack capacity` shows what that leaves)")


@pytest.mark.parametrize("utilization", [0.8, 0.9, 0.92, 0.95, 0.333])
def test_the_comparison_is_vllms_to_the_byte(monkeypatch: pytest.MonkeyPatch, utilization: float) -> None:
    # v1/worker/utils.py request_memory: refuse when free < ceil(total x utilization)
    needed = math.ceil(TOTAL * utilization)
    argv = ("--gpu-memory-utilization", str(utilization))
    _fake_torch(monkeypatch, [needed])
    assert run(parse(["--backend", "kubernetes", "memory", "--", *argv]))[0]
    # on Docker too: exactly enough is no shortage to look into (no process list here to ask for)
    monkeypatch.setenv("PATH", "/nonexistent")
    ok, lines = run(parse(["--backend", "docker", "memory", "--", *argv]))
    assert ok and lines[0].startswith("ok    memory  1 GPU(s) have"), lines
    _fake_torch(monkeypatch, [needed - 1])
    assert not run(parse(["--backend", "kubernetes", "memory", "--", *argv]))[0]


@pytest.mark.parametrize("free", [[11 * GIB], [31 * GIB, 7 * GIB], [TOTAL // 3], [12_884_901_887]])
def test_the_highest_utilization_named_would_start_and_the_next_would_not(free: list[int]) -> None:
    gpus = [GpuMemory(i, "", f, TOTAL) for i, f in enumerate(free)]
    released = GpuProcess("", 1, "", 5 * GIB)
    gpus += [GpuMemory(len(gpus), "", free[0], TOTAL, (released,))]  # a GPU whose server is being replaced
    highest = highest_starting(gpus)
    assert all(g.free >= requested(g.total, highest) for g in gpus)
    assert any(g.free < requested(g.total, round(highest + 0.01, 2)) for g in gpus)


@pytest.mark.parametrize(("options", "argv", "asked"), [
    ((), ("--gpu-memory-utilization=0.7",), "0.7 x total free (--gpu-memory-utilization)"),
    ((), ("--gpu_memory_utilization", "0.7"), "0.7 x total free (--gpu-memory-utilization)"),
    (("--default-utilization", "0.92"), (), "0.92 x total free (vLLM's default for the release)"),
])
def test_the_utilization_is_the_one_vllm_will_use(monkeypatch: pytest.MonkeyPatch, options: tuple[str, ...],
                                                  argv: tuple[str, ...], asked: str) -> None:
    _fake_torch(monkeypatch, [31 * GIB] * 8)
    ok, lines = _memory(*options, argv=argv)
    assert ok and asked in lines[0], lines


def test_the_engine_configs_utilization_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_torch(monkeypatch, [20 * GIB])
    args = parse(["memory", "--", "--model", "/m", "--gpu-memory-utilization", "0.9"])
    args.engine_facts = {"gpu_memory_utilization": 0.5, "extensible_kv_cache": False}
    ok, lines = run(args)
    assert ok and "0.5 x total free (vLLM's engine config)" in lines[0]


def test_an_extensible_kv_cache_is_not_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    # v0.34 request_memory: no comparison with enable_extensible_kv_cache
    _fake_torch(monkeypatch, [2 * GIB])
    args = parse(["memory", "--", "--model", "/m"])
    args.engine_facts = {"gpu_memory_utilization": 1.0, "extensible_kv_cache": True}
    ok, lines = run(args)
    assert ok and "extensible KV cache sizes itself from what is free after warm-up" in lines[0]


def test_an_unknown_utilization_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_torch(monkeypatch, [31 * GIB])
    ok, lines = run(parse(["memory", "--", "--model", "/m"]))
    assert ok and lines[0].startswith("skip  memory  not run: the utilization vLLM will use is unknown")


@pytest.mark.parametrize(("capability", "integrated"), [
    ((8, 7), True), ((11, 0), True), ((12, 1), True),  # Orin, Thor, Spark
    ((8, 6), False), ((12, 0), False), ((11, 1), False),  # discrete GPUs beside them keep their own memory
])
def test_an_integrated_gpu_counts_the_systems_available_memory(monkeypatch: pytest.MonkeyPatch,
                                                               capability: tuple[int, int], integrated: bool) -> None:
    # vllm/utils/mem_utils.py MemorySnapshot.measure: `shared_sysmem_device_mem_sms = ((8, 7), (11, 0),
    # (12, 1))  # Orin, Thor, Spark`; cudaMemGetInfo under-reports their shared system memory
    _fake_torch(monkeypatch, [1 * GIB], capability=capability)
    monkeypatch.setattr(memory, "_available_system_memory", lambda: 30 * GIB)
    ok, lines = run(parse(["--backend", "kubernetes", "memory", "--", "--gpu-memory-utilization", "0.9"]))
    assert ok is integrated
    assert ("GPU 0 30.00/32.00 GiB" in lines[0]) is integrated


def test_processes_are_listed_without_nvidia_smi_through_pynvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    process = types.SimpleNamespace(pid=4242, usedGpuMemory=20 * GIB)
    nvml = types.SimpleNamespace(
        nvmlInit=lambda: None, nvmlShutdown=lambda: None, nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda i: i, nvmlDeviceGetUUID=lambda h: f"GPU-{UUIDS[0]}".encode(),
        nvmlDeviceGetComputeRunningProcesses=lambda h: [process], nvmlSystemGetProcessName=lambda pid: b"vllm")
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    _fake_torch(monkeypatch, [11 * GIB])
    ok, lines = run(parse(["--backend", "kubernetes", "memory", "--", "--gpu-memory-utilization", "0.9"]))
    assert not ok and "held by pid 4242 (vllm) on GPU 0: 20.00 GiB" in [line.strip() for line in lines]


def test_processes_that_cannot_be_listed_say_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    _fake_torch(monkeypatch, [11 * GIB])
    ok, lines = run(parse(["--backend", "kubernetes", "memory", "--", "--gpu-memory-utilization", "0.9"]))
    assert not ok
    assert any(line.strip().startswith("processes: neither pynvml nor nvidia-smi could list them") for line in lines)


def _server_and(notebook_gib: int) -> str:
    """nvidia-smi rows: the running server's TP worker on each of 8 GPUs (0.8 of 32 GiB with its
    context), and a notebook of `notebook_gib` on GPU 2."""
    rows = "".join(f"GPU-{uuid}, {1000 + i}, VLLM::Worker_TP{i}, 26624\n" for i, uuid in enumerate(UUIDS))
    return rows + (f"GPU-{UUIDS[2]}, 777, jupyter, {notebook_gib * 1024}\n" if notebook_gib else "")


def test_docker_counts_the_server_being_replaced_as_free_at_start(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    # the old server still holds 26 GiB on each GPU while the preflight runs; it stops before the new one starts
    _fake_torch(monkeypatch, [5 * GIB] * 8)
    _fake_nvidia_smi(monkeypatch, tmp_path, _server_and(0))
    ok, lines = _memory(backend="docker")
    assert ok, lines
    assert lines[0] == ("ok    memory  8 GPU(s) have 0.8 x total free (--gpu-memory-utilization), once the server "
                        "being replaced stops on 8; least free at start: GPU 0 31.00/32.00 GiB")


def test_docker_refuses_what_another_process_holds_besides_the_server_being_replaced(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # the new stack raises the utilization from 0.8 to 0.9; a notebook took 4 GiB of GPU 2's slack meanwhile
    free = [5 * GIB] * 8
    free[2] = 1 * GIB
    _fake_torch(monkeypatch, free)
    _fake_nvidia_smi(monkeypatch, tmp_path, _server_and(4))
    ok, lines = _memory(backend="docker", argv=("--gpu-memory-utilization", "0.9"))
    assert not ok
    assert lines[0].startswith("FAIL  memory  1 of 8 GPU(s) will have less free memory than 0.9 x total")
    assert lines[0].endswith("the highest utilization that would start is 0.84")
    details = [line.strip() for line in lines[1:-2]]
    assert details[2] == ("GPU 2: 1.00/32.00 GiB free, 27.00 once the server being replaced stops, "
                          "28.80 GiB needed (short)")
    assert "held by pid 1002 (VLLM::Worker_TP2) on GPU 2: 26.00 GiB - taken for the server being replaced" in details
    assert "held by pid 777 (jupyter) on GPU 2: 4.00 GiB" in details


def test_docker_refuses_a_first_deployment_beside_a_small_process(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    # no server yet; a stray 10 GiB process on GPU 0 is no server being replaced (less than half of 25.6 GiB)
    _fake_torch(monkeypatch, [22 * GIB] + [32 * GIB] * 7)
    _fake_nvidia_smi(monkeypatch, tmp_path, f"GPU-{UUIDS[0]}, 4242, python3, 10240\n")
    ok, lines = _memory(backend="docker")
    assert not ok and "GPU 0: 22.00/32.00 GiB free, 25.60 GiB needed (short)" in [x.strip() for x in lines]


def test_docker_without_a_process_list_cannot_tell_and_does_not_refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    _fake_torch(monkeypatch, [5 * GIB] * 8)
    ok, lines = _memory(backend="docker")
    assert ok and lines[0].startswith("skip  memory  not run: GPU 0, 1, 2, 3, 4, 5, 6, 7 has less than 0.8 x total")


def test_nvidia_smi_rows_become_processes() -> None:
    rows = "GPU-AB, 12, python3, 2048\nGPU-cd, 13, a, b, [N/A]\nNo running processes found\n"
    assert [(p.gpu_uuid, p.pid, p.name, p.used) for p in from_nvidia_smi(rows)] == [
        ("ab", 12, "python3", 2 * GIB), ("cd", 13, "a, b", None)]


@pytest.mark.parametrize(("used", "taken"), [(13_743_895_348, True), (13_743_895_347, False), (12_369_505_813, False)])
def test_a_process_is_taken_for_the_server_being_replaced_from_half_what_the_new_one_asks(used: int,
                                                                                        taken: bool) -> None:
    # 0.8 x 32 GiB = 27,487,790,694.4 -> vLLM asks ceil = 27,487,790,695 bytes; half of it is
    # 13,743,895,347.5: a process holding at least that is taken for the outgoing server, 45% is not
    [gpu] = memory.with_released([GpuMemory(0, UUIDS[0], 1 * GIB, TOTAL)], [GpuProcess(UUIDS[0], 42, "", used)], 0.8)
    assert bool(gpu.released) is taken
