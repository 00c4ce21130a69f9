"""The Compose file equivalent to a container spec, shaped like seed 004's.

Built from the same `ContainerSpec` as `docker run` and the Docker backend. Differences from the
seed's hand-written file (each a correction or an addition, none a loss):
- no top-level `version:` (obsolete in the Compose specification; Compose v2 warns about it);
- the image is pinned (`image.tag`/`image.digest`), never `:latest`;
- the weights are mounted read-only (`:ro`) from the configured host path (seed: `./Qwen3.6-27B-FP8`);
- the compile cache, healthcheck, restart policy, log rotation, labels and `ipc` are added;
- the seed's CPU/memory `reservations` (16 CPUs, 32 GB) are not modelled by the Docker settings
  and are left out; the GPU reservation (`devices`) is kept.

Compose interpolates `$VAR` and `${VAR}` in every value of the file from the shell running
`docker compose`; so every `$` in a value is written `$$`, which Compose reads back as one `$`,
and the container gets exactly what `docker run` would give it (a `$` in an env value, an API key
or an extra argument stays a `$`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from vllm_serving.masking import shown
from vllm_serving.render.docker_container import ContainerSpec
from vllm_serving.units import MIB, format_size


def _gpu_devices(gpus: str) -> list[dict[str, Any]]:
    """`--gpus all` / `device=6,7` as Compose's device reservation."""
    device: dict[str, Any] = {"driver": "nvidia"}
    if gpus == "all":
        device["count"] = "all"
    else:
        device["device_ids"] = gpus.removeprefix("device=").split(",")
    device["capabilities"] = ["gpu"]
    return [device]


def _host_ip(address: str) -> str:
    """Compose's short port syntax needs an IPv6 address in brackets (`[::1]:30006:8000`)."""
    return f"[{address}]" if ":" in address else address


def compose_service(c: ContainerSpec, secrets: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One service; `secrets` maps env names to values to reveal them (masked otherwise)."""
    publish = f"{c.host_port}:{c.container_port}"
    service: dict[str, Any] = {
        "image": c.image,
        "container_name": c.name,
        "command": list(c.command),
        "ports": [publish if c.bind_address == "0.0.0.0" else f"{_host_ip(c.bind_address)}:{publish}"],
        "volumes": [f"{m.source}:{m.target}" + (":ro" if m.read_only else "") for m in c.mounts],
    }
    env = dict(c.env) | {name: shown(secrets, name) for name in c.secret_env}
    if env:
        service["environment"] = env
    if c.shm_size_mb is not None:
        service["shm_size"] = format_size(c.shm_size_mb * MIB)
    service["ipc"] = c.ipc_mode
    if c.runtime:
        service["runtime"] = c.runtime
    if c.privileged:
        service["privileged"] = True
    service["security_opt"] = list(c.security_opts)
    if c.gpus is not None:  # None: a CPU target reserves no GPU
        service["deploy"] = {"resources": {"reservations": {"devices": _gpu_devices(c.gpus)}}}
    service["restart"] = c.restart
    service["stop_signal"] = c.stop_signal
    service["stop_grace_period"] = f"{c.stop_grace_seconds}s"
    hc = c.healthcheck
    service["healthcheck"] = {"test": list(hc.tests), "interval": hc.interval, "timeout": hc.timeout,
                              "start_period": hc.start_period, "retries": hc.retries}
    service["logging"] = {"driver": c.log_driver, "options": dict(c.log_opts)}
    service["labels"] = dict(c.labels)
    return service


def escape_interpolation(value: Any) -> Any:
    """Every string value with `$` doubled, keys untouched (Compose interpolates values only)."""
    if isinstance(value, str):
        return value.replace("$", "$$")
    if isinstance(value, dict):
        return {key: escape_interpolation(item) for key, item in value.items()}
    if isinstance(value, list):
        return [escape_interpolation(item) for item in value]
    return value


def compose_document(c: ContainerSpec, secrets: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`services:` plus the named volumes under their real names (no project prefix)."""
    doc: dict[str, Any] = {"services": {c.name: compose_service(c, secrets)}}
    volumes: dict[str, Any] = {}
    for i, m in enumerate(c.mounts):
        if m.kind == "volume":
            # the weights volume must exist already (it holds the model); the cache is created
            volumes[m.source] = {"name": m.source, "external": True} if i == 0 else {"name": m.source}
    if volumes:
        doc["volumes"] = volumes
    return doc


def compose_yaml(c: ContainerSpec, secrets: Mapping[str, str] | None = None) -> str:
    """The Compose file's text: `compose_document` with every `$` in a value escaped as `$$`."""
    return yaml.safe_dump(escape_interpolation(compose_document(c, secrets)), sort_keys=False,
                          default_flow_style=False, width=120)
