"""Day 2 with volumes the stack adopted: a Compose cache volume, an NFS weights volume.

Docker's volume create on an existing name returns the volume as it is, labels and driver options
included, and the provider reads both back (terraform-provider-docker v4.5.0
resource_docker_volume.go `resourceDockerVolumeRead`); both force a replacement and neither is
computed. Without ignoring them every `pulumi up` would replace the volume (create-first: the same
volume again, the old one "deleted" by retainOnDelete) and fail on a protected weights volume.
The weights must survive every run and `destroy`.
"""

from __future__ import annotations

from typing import Any

from tests.scenario.docker_host import Daemon, DockerProvider, Volume
from tests.scenario.engine import Engine
from tests.stack_builders import stack_values

SECRETS = {"registryPassword": "SENTINEL-day2-registry-pw"}
WEIGHTS, CACHE = "qwen-weights", "vllm-compile-cache"
COMPOSE = {"com.docker.compose.project": "models", "com.docker.compose.version": "2.29.1"}
NFS = {"type": "nfs", "o": "addr=10.0.0.5,nfsvers=4,ro", "device": ":/export/models/Qwen3.5-27B"}


def _config(protect: bool) -> dict[str, Any]:
    return stack_values("v100", model={"hostPath": None, "volumeName": WEIGHTS, "protect": protect},
                        cache={"hostPath": None, "volumeName": CACHE})


def _engine(config: dict[str, Any]) -> tuple[Engine, Daemon]:
    docker = DockerProvider()
    daemon = docker.daemon_of(config)
    daemon.volumes[WEIGHTS] = Volume(WEIGHTS, {**COMPOSE, "com.docker.compose.volume": "weights"}, "local",
                                     dict(NFS), data="Qwen3.5-27B weights, copied over 6 hours")
    daemon.volumes[CACHE] = Volume(CACHE, {**COMPOSE, "com.docker.compose.volume": "cache"}, data="compiled kernels")
    return Engine({"docker": docker}, stack="v100"), daemon


def test_a_protected_nfs_weights_volume_is_adopted_once_and_left_alone() -> None:
    config = _config(protect=True)
    engine, daemon = _engine(config)
    assert engine.up(config, SECRETS).ok
    # Docker returned the volume as it was; the provider read its labels and options back
    assert engine.entry("vllm-qwen35-27b-model").outputs["driverOpts"] == NFS

    again = engine.up(config, SECRETS)
    assert again.ok, again.error
    assert again.of("vllm-qwen35-27b-model") == again.of("vllm-qwen35-27b-cache") == ["same"]
    assert daemon.volumes[WEIGHTS].data.startswith("Qwen3.5-27B weights")


def test_destroy_keeps_the_adopted_volumes_and_the_next_up_takes_them_again() -> None:
    config = _config(protect=False)
    engine, daemon = _engine(config)
    assert engine.up(config, SECRETS).ok
    gone = engine.destroy()
    assert gone.ok and gone.of("vllm-qwen35-27b-model") == ["delete-retained"]
    assert (daemon.volumes[WEIGHTS].data, daemon.volumes[CACHE].data) == (
        "Qwen3.5-27B weights, copied over 6 hours", "compiled kernels")
    assert not daemon.containers

    back = engine.up(config, SECRETS)
    assert back.ok and back.of("vllm-qwen35-27b-model") == ["create"]
    assert engine.up(config, SECRETS).of("vllm-qwen35-27b-cache") == ["same"]
    assert daemon.volumes[WEIGHTS].labels["com.docker.compose.volume"] == "weights"
