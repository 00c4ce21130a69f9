"""What the preflight runs for a stack: the program, the checks that apply, and their arguments.

The program is `python3 -c PROGRAM`: `loader.py` and the in-image package's sources, verbatim.
Its arguments depend on the GPUs (how many, which compute capability), the weights (where they are
mounted, where they come from), the release's recorded vLLM entry points, and - appended by the
backend with `for_server` - the server's own argv and environment, byte for byte. So on Docker the
preflight runs again whenever the image, the GPUs, the weights or vLLM's argv change.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from vllm_serving.engine.flags import FLAGS
from vllm_serving.engine.release_registry import release_for_tag, release_section
from vllm_serving.findings import config_key
from vllm_serving.spec import ServingSpec

Backend = Literal["docker", "kubernetes"]

PACKAGE = "vllm_preflight"
"""The in-image package's name inside the container."""
_HERE = Path(__file__).parent
SOURCES = {p.stem: p.read_text(encoding="utf-8") for p in sorted((_HERE / "in_image").glob("*.py"))}


def _lines(text: str) -> str:
    """`text` as a Python expression of one line per source line, so a preview diffs it line by line."""
    return '"\\n".join([\n' + "".join(f"        {line!r},\n" for line in text.split("\n")) + "    ])"


PROGRAM = (_HERE / "loader.py").read_text(encoding="utf-8") + "\nSOURCES = {\n" + "".join(
    f"    {name!r}: {_lines(text)},\n" for name, text in SOURCES.items()) + (
    f'}}\nif __name__ == "__main__":\n    run({PACKAGE!r}, SOURCES)\n')
"""The program as the container receives it: what you read in loader.py and in_image/ is what runs."""
ENTRYPOINT = ("python3", "-c", PROGRAM)
# Kubernetes probes are httpGet: only the Docker healthcheck needs curl in the image.
CHECKS: dict[Backend, tuple[str, ...]] = {
    "docker": ("runtime", "gpus", "arch", "weights", "engine", "memory", "curl"),
    "kubernetes": ("runtime", "gpus", "arch", "weights", "engine", "memory"),
}
GPU_CHECKS = frozenset({"runtime", "gpus", "arch", "memory"})
"""Left out on a CPU target (`hardware.device: cpu`), which has no GPU and no NVIDIA runtime."""
TIMEOUT_SECONDS = 600
"""Importing torch and initialising CUDA on eight GPUs takes well under a minute, vLLM's own checks
at most in_image.engine.ENGINE_SECONDS (300); a hung driver takes forever."""
ENTRY_POINTS_SECTION = "preflight_entry_points"
"""The registry section tools/vllm_release/entry_points.py writes."""


class PreflightCommand(msgspec.Struct, frozen=True):
    entrypoint: tuple[str, ...]
    """`python3 -c <program>`: replaces the image's `vllm serve` entrypoint."""
    args: tuple[str, ...]
    """The program's options, the checks to run, then `--` and the server's argv."""
    checks: tuple[str, ...]
    """The checks, in the order they run."""
    env: tuple[tuple[str, str], ...] = ()
    """The server's plain environment (its secrets stay with the server: no check reads them)."""

    def for_server(self, argv: Sequence[str], env: Sequence[tuple[str, str]] = ()) -> PreflightCommand:
        """This preflight checking the server whose argv (after the image's entrypoint) and plain
        environment are these, exactly."""
        return msgspec.structs.replace(self, args=(*self.args, "--", *argv), env=tuple(env))


def docker_weights_source(spec: ServingSpec) -> str:
    """Where the weights come from on a Docker host, for the fix line."""
    model = spec.settings.model
    if model.host_path is not None:
        return f"the Docker host's directory {model.host_path} ({config_key('model', 'hostPath')})"
    return f"the Docker volume {model.volume_name} ({config_key('model', 'volumeName')})"


def flag_keys(spec: ServingSpec) -> dict[str, str]:
    """vLLM flag -> the stack key that sets it: the flag table, and every flag of engine.extraArgs."""
    keys = {f.flag: config_key(*f.key.split(".")) for f in FLAGS}
    keys |= {"--no-" + f.flag[2:]: config_key(*f.key.split(".")) for f in FLAGS if f.form == "negatable"}
    for token in spec.settings.engine.extra_args:
        if token.startswith("--"):
            keys.setdefault(token.split("=", 1)[0], config_key("engine", "extraArgs"))
    return keys


def recorded_entry_points(tag: str | None) -> dict[str, Any]:
    """The release's entry points as the registry generator recorded them; empty for a tag the
    project has no registry for (the program then looks for them itself)."""
    release, unknown = release_for_tag(tag)
    if unknown is not None:
        return {}
    section = release_section(release.version, ENTRY_POINTS_SECTION)
    return dict(section) if isinstance(section, dict) else {}


def preflight_command(spec: ServingSpec, backend: Backend, weights_source: str,
                      gpus: int | None = None) -> PreflightCommand | None:
    """The preflight of `spec` on `backend`, on a container given `gpus` GPUs (default: the
    server's TP x PP x DP); None when `preflight.enabled` is false. The backend appends the server's
    argv and environment (`for_server`)."""
    if not spec.settings.preflight.enabled:
        return None
    uses_gpus = spec.settings.hardware.uses_gpus
    checks = tuple(c for c in CHECKS[backend] if uses_gpus or c not in GPU_CHECKS)
    args: tuple[str, ...] = ("--backend", backend, "--weights", spec.settings.model.mount_path,
                             "--weights-source", weights_source)
    if uses_gpus:
        major, minor = spec.gpu.compute_capability
        count = spec.settings.engine.gpus_needed if gpus is None else gpus
        args += ("--gpus", str(count), "--capability", f"{major}.{minor}")
    recorded = recorded_entry_points(spec.settings.image.tag)
    calls = {name: where for name, where in recorded.get("calls", {}).items() if isinstance(where, str)}
    if calls:
        args += ("--vllm-entry-points", json.dumps(calls, sort_keys=True, separators=(",", ":")))
    default = recorded.get("memory", {}).get("default_gpu_memory_utilization")
    if uses_gpus and isinstance(default, (int, float)):
        args += ("--default-utilization", repr(float(default)))
    args += ("--flag-keys", json.dumps(flag_keys(spec), sort_keys=True, separators=(",", ":")))
    return PreflightCommand(ENTRYPOINT, (*args, *checks), checks)
