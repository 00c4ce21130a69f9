"""Every fix line the preflight prints names stack keys a user can set: each `vllm-serving:section.key`
(and each `section.key` after it) is a field of the stack's settings. The in-image program cannot
import the project, so its fix texts are written out by hand there; this reads them against the
settings models, the one source of the keys."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from vllm_serving.preflight.in_image import engine, main
from vllm_serving.preflight.in_image.memory import GpuMemory, judge
from vllm_serving.preflight.in_image.report import GIB, CheckFailed
from vllm_serving.preflight.verdict import Verdict, failure_message
from vllm_serving.settings import StackSettings

QUALIFIED = re.compile(r"vllm-serving:([A-Za-z]+(?:\.[A-Za-z]+)+)")
DOTTED = re.compile(r"(?<![\w:/.-])([a-z]+\.[a-z][A-Za-z]+)\b")


def _field(model: type[BaseModel], name: str) -> Any:
    return next((f for n, f in model.model_fields.items() if name in (f.alias, n) and n != "secrets_set"), None)


def _is_key(key: str) -> bool:
    """`engine.gpuMemoryUtilization`: a section of the stack, and a field of it, by their YAML names."""
    model: Any = StackSettings
    for part in key.split("."):
        field = _field(model, part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return False
        model = next((c for c in getattr(field.annotation, "__args__", (field.annotation,))
                      if isinstance(c, type) and issubclass(c, BaseModel)), field.annotation)
    return True


def _keys(text: str) -> list[str]:
    """The stack keys a fix names: every qualified one, and `section.key` where section is one."""
    named = QUALIFIED.findall(text)
    named += [k for k in DOTTED.findall(text) if _field(StackSettings, k.split(".")[0]) is not None]
    return named


def _memory_fix() -> str:
    with pytest.raises(CheckFailed) as failed:
        judge([GpuMemory(0, "u", 1 * GIB, 32 * GIB)], [], 0.9, "--gpu-memory-utilization")
    assert failed.value.fix is not None
    return failed.value.fix


def _fixes() -> dict[str, str]:
    texts = {f"{name} ({backend})": main.fix_for(name, backend, "the Docker volume w (vllm-serving:model.volumeName)")
             for name in main.CHECKS for backend in ("docker", "kubernetes")}
    return texts | {
        "engine: image": engine.IMAGE_FIX,
        "engine: refused": engine._fix("0.19.1", ["vllm-serving:engine.maxModelLen"]),
        "memory: short": _memory_fix(),
        "pulumi up": failure_message("on the Docker host", Verdict(False, ("FAIL  x",)), 1, "pulumi up"),
    }


def test_the_check_reads_keys_as_the_settings_name_them() -> None:
    assert _is_key("engine.gpuMemoryUtilization") and _is_key("kubernetes.runtimeClassName")
    assert not _is_key("engine.gpuMemory") and not _is_key("images.tag") and not _is_key("engine.maxModelLen.x")
    assert _keys("set vllm-serving:hardware.gpu, hardware.count and e.g. config.json") == [
        "hardware.gpu", "hardware.count"]


@pytest.mark.parametrize(("where", "text"), sorted(_fixes().items()))
def test_every_fix_line_names_keys_the_stack_has(where: str, text: str) -> None:
    named = _keys(text)
    assert [k for k in named if not _is_key(k)] == [], f"{where}: {text}"


def test_the_fixes_that_name_a_key_name_the_one_to_change() -> None:
    # what a user is told to set, per check, written from the settings reference (docs/configuration.md)
    named = {where: _keys(text) for where, text in _fixes().items()}
    assert named["runtime (docker)"] == ["container.runtime"]
    assert named["runtime (kubernetes)"] == ["kubernetes.runtimeClassName"]
    assert named["gpus (docker)"] == ["hardware.gpu", "hardware.count", "hardware.deviceIds"]
    assert named["gpus (kubernetes)"] == ["hardware.gpu", "kubernetes.nodeSelector"]
    assert named["arch (docker)"] == named["arch (kubernetes)"] == ["image.tag", "image.digest"]
    assert named["weights (docker)"] == ["model.volumeName"]  # where the weights come from, as given
    assert named["engine (docker)"] == ["preflight.enabled"]
    assert named["memory (docker)"] == named["memory: short"] == ["engine.gpuMemoryUtilization"]
    assert named["curl (docker)"] == []
    assert named["engine: image"] == ["image.repository", "image.tag"]
    assert named["engine: refused"] == ["engine.maxModelLen", "image.tag"]
    assert named["pulumi up"] == ["preflight.enabled"]
