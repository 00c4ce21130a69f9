"""What the preflight runs for a stack: the script, the checks that apply, and their arguments.

The arguments depend only on the GPUs (how many, which compute capability) and the weights (where
they are mounted, where they come from), so on Docker the preflight re-runs only when the image,
the GPUs or the weights change.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from vllm_serving.findings import config_key
from vllm_serving.spec import ServingSpec

Backend = Literal["docker", "kubernetes"]

SCRIPT_TEXT = (Path(__file__).parent / "script.py").read_text(encoding="utf-8")
"""The script as the container receives it, verbatim: what you read is what runs."""
ENTRYPOINT = ("python3", "-c", SCRIPT_TEXT)
# Kubernetes probes are httpGet: only the Docker healthcheck needs curl in the image.
CHECKS: dict[Backend, tuple[str, ...]] = {
    "docker": ("runtime", "gpus", "arch", "weights", "curl"),
    "kubernetes": ("runtime", "gpus", "arch", "weights"),
}
GPU_CHECKS = frozenset({"runtime", "gpus", "arch"})
"""Left out on a CPU target (`hardware.device: cpu`), which has no GPU and no NVIDIA runtime."""
TIMEOUT_SECONDS = 600
"""Importing torch and initialising CUDA on eight GPUs takes well under a minute; a hung driver does not."""


@dataclass(frozen=True)
class PreflightCommand:
    entrypoint: tuple[str, ...]
    """`python3 -c <script>`: replaces the image's `vllm serve` entrypoint."""
    args: tuple[str, ...]
    """The script's options, then the checks to run."""
    checks: tuple[str, ...]
    """The checks, in the order they run."""


def docker_weights_source(spec: ServingSpec) -> str:
    """Where the weights come from on a Docker host, for the fix line."""
    model = spec.settings.model
    if model.host_path is not None:
        return f"the Docker host's directory {model.host_path} ({config_key('model', 'hostPath')})"
    return f"the Docker volume {model.volume_name} ({config_key('model', 'volumeName')})"


def preflight_command(spec: ServingSpec, backend: Backend, weights_source: str,
                      gpus: int | None = None) -> PreflightCommand | None:
    """The preflight of `spec` on `backend`, on a container given `gpus` GPUs (default: the
    server's TP x PP x DP); None when `preflight.enabled` is false."""
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
    return PreflightCommand(ENTRYPOINT, (*args, *checks), checks)
