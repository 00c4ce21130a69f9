"""The Docker container a deployment needs, as plain data.

`VllmServer` turns this into a `docker.Container`; `docker_run` and the Compose renderer print
it. One description, so the preview, the hand-typed command and the Compose file cannot drift.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from vllm_serving.engine.defaults import IMAGE_SIZE_GIB, STOP_SIGNAL, VLLM_CACHE_PATH, image_size_class
from vllm_serving.spec import ServingSpec
from vllm_serving.timing import (
    HEALTH_INTERVAL_SECONDS,
    HEALTH_RETRIES,
    HEALTH_TIMEOUT_SECONDS,
    docker_wait_seconds,
    image_pull_seconds,
)
from vllm_serving.units import go_duration


class Mount(msgspec.Struct, frozen=True):
    """A bind mount (`kind="bind"`, source is a host path) or a named volume."""

    kind: Literal["bind", "volume"]
    source: str
    target: str
    read_only: bool


class Healthcheck(msgspec.Struct, frozen=True):
    """Docker healthcheck; durations in Go's canonical form so they read back unchanged."""

    tests: tuple[str, ...]
    interval: str
    timeout: str
    start_period: str
    retries: int


class ContainerSpec(msgspec.Struct, frozen=True):
    name: str
    image: str
    gpus: str | None
    """`all`, or `device=6,7,8,9` as `docker run --gpus` takes it; None on a CPU target (no GPU request)."""
    device_ids: tuple[str, ...] | None
    """Specific GPUs; the provider needs them as a device request (its `gpus` CSV-splits a list)."""
    runtime: str | None
    ipc_mode: str
    shm_size_mb: int | None
    """None with `ipc_mode: host`, where Docker ignores it and uses the host's /dev/shm."""
    privileged: bool
    security_opts: tuple[str, ...]
    """`--security-opt` values (`security_opts` of the provider, `security_opt` in Compose)."""
    bind_address: str
    host_port: int
    container_port: int
    mounts: tuple[Mount, ...]
    env: tuple[tuple[str, str], ...]
    secret_env: tuple[str, ...]
    command: tuple[str, ...]
    healthcheck: Healthcheck
    restart: str
    log_driver: str
    log_opts: tuple[tuple[str, str], ...]
    labels: tuple[tuple[str, str], ...]
    wait_timeout_seconds: int
    stop_signal: str
    stop_grace_seconds: int

    @property
    def model_mount(self) -> Mount:
        return self.mounts[0]

    @property
    def cache_mount(self) -> Mount | None:
        return self.mounts[1] if len(self.mounts) > 1 else None


LOG_DRIVER = "json-file"
LOG_OPTS_LABEL = "vllm-serving.log-opts"
"""The stack's own log options, as a label on the server. dockerd merges daemon.json's `log-opts`
into a container's (moby daemon/logs.go `mergeAndVerifyLogConfig`) and the provider reads the merged
map back into `log_opts`, a ForceNew map, so `VllmServer` ignores `logOpts` whole: an ignored map
*key* would leave the map's count diff, which replaces the server beside any other change
(docs/provider-behaviour.md, Day 2 row 4). Labels force a replacement and are never read back, so a
changed `container.logMaxSize` or `logMaxFiles` still replaces the server, and the engine creates a
replacement from the program's values, the new options included."""


def log_opts_label(c: ContainerSpec) -> tuple[str, str]:
    """`vllm-serving.log-opts` = `max-file=3,max-size=100m`: what the server's log options are."""
    return LOG_OPTS_LABEL, ",".join(f"{key}={value}" for key, value in sorted(c.log_opts))


NO_NEW_PRIVILEGES = "no-new-privileges=true"
"""No process in the container gains privileges through setuid binaries or file capabilities."""
SELINUX_DISABLED = "label=disable"


def security_opts(ipc_mode: str, privileged: bool) -> tuple[str, ...]:
    """`no-new-privileges` always. With the host's IPC namespace (or privileged) a Docker daemon
    running with SELinux adds `label=disable` itself unless a label option is given (moby's
    daemon.generateSecurityOpt); stated here, the container reads back exactly what the provider
    sent, so such hosts see no diff (and a replacement) on every `pulumi up`. Without SELinux a
    label option changes nothing."""
    if ipc_mode == "host" or privileged:
        return (NO_NEW_PRIVILEGES, SELINUX_DISABLED)
    return (NO_NEW_PRIVILEGES,)


def model_mount(spec: ServingSpec) -> Mount:
    """The weights: always read-only, so a bug in the server can never damage them."""
    m = spec.settings.model
    if m.host_path is not None:
        return Mount("bind", m.host_path, m.mount_path, read_only=True)
    assert m.volume_name is not None
    return Mount("volume", m.volume_name, m.mount_path, read_only=True)


def cache_mount(spec: ServingSpec) -> Mount | None:
    """The compile cache: writable, kept across container replacements."""
    s = spec.settings
    if not s.cache.enabled:
        return None
    if s.cache.host_path is not None:
        return Mount("bind", s.cache.host_path, VLLM_CACHE_PATH, read_only=False)
    volume = s.cache_volume_name
    assert volume is not None
    return Mount("volume", volume, VLLM_CACHE_PATH, read_only=False)


def container_spec(spec: ServingSpec, image: str | None = None) -> ContainerSpec:
    """The container for `spec`; `image` overrides the reference (e.g. a pulled image id)."""
    s = spec.settings
    ids = s.hardware.device_ids
    mounts = tuple(m for m in (model_mount(spec), cache_mount(spec)) if m is not None)
    health = Healthcheck(
        tests=("CMD", "curl", "-fsS", f"http://localhost:{spec.container_port}/health"),
        interval=go_duration(HEALTH_INTERVAL_SECONDS),
        timeout=go_duration(HEALTH_TIMEOUT_SECONDS),
        start_period=go_duration(spec.startup_seconds),
        retries=HEALTH_RETRIES,
    )
    return ContainerSpec(
        name=s.container.name,
        image=image or s.image.reference,
        gpus=("device=" + ",".join(map(str, ids)) if ids else "all") if s.hardware.uses_gpus else None,
        device_ids=tuple(map(str, ids)) if ids else None,
        runtime=s.container.runtime,
        ipc_mode=s.container.ipc_mode,
        shm_size_mb=None if s.container.ipc_mode == "host" else s.container.shm_size_mb,
        privileged=s.container.privileged,
        security_opts=security_opts(s.container.ipc_mode, s.container.privileged),
        bind_address=s.network.bind_address,
        host_port=s.network.host_port,
        container_port=spec.container_port,
        mounts=mounts,
        env=spec.env,
        secret_env=spec.secret_env,
        command=spec.args,
        healthcheck=health,
        restart=s.container.restart,
        log_driver=LOG_DRIVER,
        log_opts=(("max-file", str(s.container.log_max_files)), ("max-size", s.container.log_max_size)),
        labels=(
            ("vllm-serving.model", spec.served_model_name),
            ("vllm-serving.stack", spec.stack),
        ),
        # one more health interval than the start period: the first success may land just after it
        wait_timeout_seconds=docker_wait_seconds(spec.startup_seconds),
        stop_signal=STOP_SIGNAL,
        stop_grace_seconds=s.container.stop_grace_period,
    )


def pull_timeout_seconds(spec: ServingSpec) -> int:
    """How long the image pull may take: `image.pullTimeout`, else from the image's size class."""
    image = spec.settings.image
    if image.pull_timeout is not None:
        return image.pull_timeout
    return image_pull_seconds(IMAGE_SIZE_GIB[image_size_class(image.repository, image.tag)])
