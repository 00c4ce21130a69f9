"""The host checks (runtime, GPUs, torch's kernels, weights, curl), one by one and as the image runs
the program (`python3 -c`)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from tests.preflight.program import run_program
from vllm_serving.preflight.in_image import host
from vllm_serving.preflight.in_image import main as script
from vllm_serving.preflight.verdict import read_verdict

CONFIG = {"architectures": ["Qwen3_5ForConditionalGeneration"]}


def _model(path: Path, shards: int = 2) -> Path:
    """A model directory as Hugging Face ships it: config, shards and the index that lists them."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(CONFIG))
    names = [f"model-{i:05d}-of-{shards:05d}.safetensors" for i in range(1, shards + 1)]
    for name in names:
        (path / name).write_bytes(b"\0" * 1024)
    index = {"weight_map": {f"layer.{i}": name for i, name in enumerate(names)}}
    (path / "model.safetensors.index.json").write_text(json.dumps(index))
    return path


def test_a_complete_model_passes(tmp_path: Path) -> None:
    done = run_program(["--weights", str(_model(tmp_path / "m")), "weights", "curl"])
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ok    weights  config.json (Qwen3_5ForConditionalGeneration), 2 weight files")
    assert lines[-1] == "preflight: passed (2 checks)"
    assert read_verdict(done.returncode, done.stdout).passed


def test_an_empty_weights_dir_fails_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    source = "the Docker host's directory /u02/models/Qwen3.5-27B (vllm-serving:model.hostPath)"
    done = run_program(["--weights", str(tmp_path / "empty"), "--weights-source", source, "weights"])
    assert done.returncode == 1
    fail, fix, verdict = done.stdout.splitlines()
    assert fail.startswith("FAIL  weights") and "is empty" in fail and "bind-mount source" in fail
    assert fix.strip() == f"fix: {script.fix_for('weights', 'docker', source)}" and source in fix
    assert verdict == "preflight: FAILED (weights)"
    assert not read_verdict(done.returncode, done.stdout).passed


@pytest.mark.parametrize(("damage", "found"), [
    (lambda p: (p / "config.json").unlink(), "has no config.json (it holds model-00001-of-00002.safetensors"),
    (lambda p: (p / "config.json").write_text("{not json"), "config.json cannot be read as JSON"),
    (lambda p: [f.unlink() for f in p.glob("*.safetensors")], "has a config.json but no weight files"),
    (lambda p: (p / "model-00002-of-00002.safetensors").unlink(),
     "1 of 2 shards model.safetensors.index.json lists are missing: model-00002-of-00002.safetensors"),
    (lambda p: (p / "model-00001-of-00002.safetensors").write_bytes(b""), "empty weight file(s)"),
])
def test_a_damaged_model_fails_saying_what_is_wrong(tmp_path: Path, damage: Any, found: str) -> None:
    path = _model(tmp_path / "m")
    damage(path)
    with pytest.raises(host.CheckFailed) as failed:
        host.check_weights(script.parse(["--weights", str(path), "weights"]))
    assert found in str(failed.value)


def _bin_model(path: Path, shards: int = 2) -> Path:
    """An older Hugging Face checkpoint: pickled `pytorch_model-*.bin` shards and their index."""
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps(CONFIG))
    names = [f"pytorch_model-{i:05d}-of-{shards:05d}.bin" for i in range(1, shards + 1)]
    for name in names:
        (path / name).write_bytes(b"\0" * 1024)
    (path / "pytorch_model.bin.index.json").write_text(json.dumps({"weight_map": {"lm_head.weight": names[-1],
                                                                                   "embed.weight": names[0]}}))
    return path


def test_bin_and_pt_checkpoints_are_weights_as_vllm_loads_them(tmp_path: Path) -> None:
    # vLLM's default loader takes *.safetensors and *.bin ("hf"), and *.pt (load_format pt, or its
    # fall-back): vllm/model_executor/model_loader/default_loader.py `_prepare_weights`
    found = host.check_weights(script.parse(["--weights", str(_bin_model(tmp_path / "bin")), "weights"]))
    assert found.startswith("config.json (Qwen3_5ForConditionalGeneration), 2 weight files")
    pt = tmp_path / "pt"
    pt.mkdir()
    (pt / "config.json").write_text(json.dumps(CONFIG))
    (pt / "model.pt").write_bytes(b"\0" * 1024)
    assert "1 weight files" in host.check_weights(script.parse(["--weights", str(pt), "weights"]))


def test_a_bin_shard_its_index_lists_is_missing(tmp_path: Path) -> None:
    path = _bin_model(tmp_path / "bin")
    (path / "pytorch_model-00002-of-00002.bin").unlink()
    with pytest.raises(host.CheckFailed) as failed:
        host.check_weights(script.parse(["--weights", str(path), "weights"]))
    assert str(failed.value) == ("1 of 2 shards pytorch_model.bin.index.json lists are missing: "
                                 "pytorch_model-00002-of-00002.bin")


def test_a_missing_weights_dir_fails(tmp_path: Path) -> None:
    with pytest.raises(host.CheckFailed, match="is not a directory in the container"):
        host.check_weights(script.parse(["--weights", str(tmp_path / "absent"), "weights"]))


def test_no_curl_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    ok, lines = script.run(script.parse(["curl"]))
    assert not ok and lines[0].startswith("FAIL  curl  no curl on the image's PATH")


@pytest.mark.parametrize(("capability", "arch_list", "runs"), [
    ((7, 0), ["sm_70", "sm_75", "sm_80"], True),  # v0.19.1's image on a V100
    ((7, 0), ["sm_75", "sm_80", "sm_90", "compute_90"], False),  # a CUDA 13 build: from sm_75
    ((8, 6), ["sm_80"], True),  # same major, higher minor
    ((8, 0), ["sm_86"], False),  # a cubin never runs below its minor
    ((9, 0), ["sm_80", "compute_80"], True),  # PTX compiled by the driver for a newer GPU
    ((7, 0), ["sm_80", "compute_70"], True),  # ... and for the GPU it was written for
    ((8, 9), ["sm_90a"], False),  # architecture-specific: that GPU only
    ((9, 0), ["sm_90a"], True),
    ((10, 3), ["sm_100a"], False),  # ... not even a later GPU of its family (B300 needs sm_103a)
    ((10, 3), ["sm_100f"], True),  # family-portable within 10.x
    ((12, 0), ["sm_100", "sm_90"], False),  # a new major needs its own cubin or PTX
    ((12, 0), ["sm_90", "compute_100"], True),
])
def test_kernels_match_the_gpu_as_cuda_loads_them(capability: tuple[int, int], arch_list: list[str],
                                                  runs: bool) -> None:
    assert host.runs_on(capability, arch_list) is runs


def _fake_torch(monkeypatch: pytest.MonkeyPatch, count: int, capability: tuple[int, int],
                arch_list: list[str]) -> None:
    cuda = types.SimpleNamespace(
        is_available=lambda: count > 0, device_count=lambda: count,
        get_device_capability=lambda i: capability, get_device_name=lambda i: "Tesla V100-SXM2-32GB",
        get_arch_list=lambda: arch_list)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda, __version__="2.10.0+cu129"))


def test_gpus_pass_when_the_stacks_gpus_are_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_torch(monkeypatch, 8, (7, 0), ["sm_70", "sm_80"])
    ok, lines = script.run(script.parse(["--gpus", "8", "--capability", "7.0", "gpus", "arch"]))
    assert ok, lines
    assert lines[0] == "ok    gpus  8 visible: Tesla V100-SXM2-32GB (7.0)"


@pytest.mark.parametrize(("count", "capability", "argv", "found"), [
    (4, (7, 0), ["--gpus", "8", "gpus"], "4 GPU(s) visible, the server needs 8"),
    (0, (7, 0), ["gpus"], "torch sees no CUDA GPU"),
    (8, (7, 0), ["--gpus", "8", "--capability", "8.0", "gpus"], "the stack's GPU has compute capability 8.0"),
    (8, (7, 0), ["arch"], "no kernels for compute capability 7.0 (its arch list: sm_75 sm_80)"),
])
def test_gpus_fail_with_what_was_found(monkeypatch: pytest.MonkeyPatch, count: int, capability: tuple[int, int],
                                       argv: list[str], found: str) -> None:
    _fake_torch(monkeypatch, count, capability, ["sm_75", "sm_80"])
    ok, lines = script.run(script.parse(argv))
    assert not ok and found in lines[0] and lines[1].startswith("      fix: ")


def test_a_check_that_breaks_is_a_failure_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(script.CHECKS, "curl", (lambda args: 1 / 0, "fix"))
    ok, lines = script.run(script.parse(["curl"]))
    assert not ok and "the check itself failed: ZeroDivisionError" in lines[0]


def test_every_check_has_a_fix_for_each_backend() -> None:
    for name in script.CHECKS:
        for backend in ("docker", "kubernetes"):
            assert script.fix_for(name, backend, "SOURCE").strip()
    assert "SOURCE" in script.fix_for("weights", "kubernetes", "SOURCE")


def test_only_the_gpus_vllm_takes_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    # all 8 GPUs given, TP 4: vLLM's workers take the first four; the others may be another model
    _fake_torch(monkeypatch, 8, (8, 0), ["sm_80"])
    cuda = sys.modules["torch"].cuda  # type: ignore[attr-defined]
    monkeypatch.setattr(cuda, "get_device_capability", lambda i: (8, 0) if i < 4 else (7, 0))
    assert script.run(script.parse(["--gpus", "4", "--capability", "8.0", "gpus", "arch"]))[0]
    ok, lines = script.run(script.parse(["--gpus", "8", "--capability", "8.0", "gpus", "arch"]))
    assert not ok and "GPU 4, 5, 6, 7 of 8" in lines[0]
