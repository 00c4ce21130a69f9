"""The project's own container spec on this machine's Docker engine, with the stand-in image.

`on_this_engine` changes only what a machine without GPUs or the stack's disks cannot give: no GPU
request (the NVIDIA runtime is part of it), the stand-in image, host paths under a temp dir (the
weights directory holding a config.json), and names and the host port made unique to the run so
runs and stacks never collide. `create` maps the spec onto the Docker API the way
`components/docker/vllm_server.py` maps it onto Pulumi's `docker.Container`.
"""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import docker
import msgspec
from docker.models.containers import Container
from docker.types import LogConfig, Mount

from vllm_serving.preflight.command import PreflightCommand
from vllm_serving.render.docker_container import ContainerSpec
from vllm_serving.render.docker_run import docker_run_command

TEST_LABEL = "vllm-serving.test"
API_TIMEOUT_SECONDS = 60
GPU_FLAGS = ("--gpus ", "--runtime=")  # `docker run` options that need GPUs and the NVIDIA runtime
RUN_SEPARATOR = " \\\n  "
GO_DURATION = re.compile(r"(\d+)(h|m|s)")
SECONDS_PER_UNIT = {"h": 3600, "m": 60, "s": 1}
# the limits of Qwen3.5-27B's config.json that vLLM reads when it creates the engine config
MODEL_CONFIG = ('{"architectures": ["Qwen3_5ForConditionalGeneration"], "text_config": '
                '{"max_position_embeddings": 262144, "head_dim": 256, "dtype": "bfloat16"}}')


def remove_labelled(client: docker.DockerClient, run_id: str, *, images: bool) -> None:
    """Every container and volume (and image, with `images`) a run labelled TEST_LABEL=run_id."""
    label = {"label": f"{TEST_LABEL}={run_id}"}
    for container in client.containers.list(all=True, filters=label):
        container.remove(force=True, v=True)
    for volume in client.volumes.list(filters=label):
        volume.remove(force=True)
    for image in client.images.list(filters=label) if images else ():
        client.images.remove(image.id, force=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def nanoseconds(duration: str) -> int:
    """Go's canonical duration (`21m0s`) in nanoseconds, the Docker API's unit."""
    return sum(int(n) * SECONDS_PER_UNIT[u] for n, u in GO_DURATION.findall(duration)) * 10**9


def on_this_engine(client: docker.DockerClient, c: ContainerSpec, *, image: str, run_id: str,
                   tmp: Path, suffix: str) -> ContainerSpec:
    """The spec with only the GPU request removed and host resources redirected (see the module doc)."""
    unique = f"{suffix}-{run_id}"
    mounts = []
    for i, m in enumerate(c.mounts):
        weights = i == 0
        if m.kind == "bind":
            source = tmp / f"{unique}-{'weights' if weights else 'cache'}"
            source.mkdir(parents=True)
            if weights:
                (source / "config.json").write_text(MODEL_CONFIG)
            mounts.append(msgspec.structs.replace(m, source=str(source)))
        else:
            volume = client.volumes.create(f"{m.source}-{unique}", labels={TEST_LABEL: run_id})
            if weights:
                _put_config(client, image, volume.name, run_id)
            mounts.append(msgspec.structs.replace(m, source=volume.name))
    return msgspec.structs.replace(
        c, name=f"{c.name}-{unique}", image=image, runtime=None, host_port=free_port(), mounts=tuple(mounts),
        labels=(*c.labels, (TEST_LABEL, run_id)))


def _put_config(client: docker.DockerClient, image: str, volume: str, run_id: str) -> None:
    """A named weights volume must hold a model too: write its config.json with a one-shot container."""
    client.containers.run(image, entrypoint=["python3", "-c", f"open('/w/config.json', 'w').write({MODEL_CONFIG!r})"],
                          mounts=[Mount("/w", volume, type="volume")], labels={TEST_LABEL: run_id}, remove=True)


def create(client: docker.DockerClient, c: ContainerSpec, secret_values: Mapping[str, str]) -> Container:
    """Run the container through the Docker API, field for field as the Pulumi component does."""
    hc = c.healthcheck
    container: Container = client.containers.run(
        c.image,
        command=list(c.command),
        name=c.name,
        detach=True,
        environment=dict(c.env) | {name: secret_values[name] for name in c.secret_env},
        ipc_mode=c.ipc_mode,
        shm_size=f"{c.shm_size_mb}m" if c.shm_size_mb is not None else None,
        privileged=c.privileged,
        ports={f"{c.container_port}/tcp": (c.bind_address, c.host_port)},
        mounts=[Mount(m.target, m.source, type=m.kind, read_only=m.read_only) for m in c.mounts],
        healthcheck={"test": list(hc.tests), "interval": nanoseconds(hc.interval),
                     "timeout": nanoseconds(hc.timeout), "start_period": nanoseconds(hc.start_period),
                     "retries": hc.retries},
        restart_policy={"Name": c.restart},
        log_config=LogConfig(type=c.log_driver, config=dict(c.log_opts)),
        labels=dict(c.labels),
    )
    return container


def run_preflight(client: docker.DockerClient, command: PreflightCommand, server: ContainerSpec, run_id: str,
                  checks: tuple[str, ...], mounts: tuple[Mount, ...] = ()) -> tuple[int, str]:
    """The preflight of `server` as components/docker/preflight.py runs it - the server's argv and
    plain environment (`for_server`), its weights mount read-only, the default bridge network - with `checks`
    instead of the GPU ones; `mounts` adds what a test needs (a directory the fake vLLM writes what it
    saw into, the fake GPU modules)."""
    command = command.for_server(server.command, server.env)
    own = [a for a in command.args[:command.args.index("--")] if a not in command.checks]
    weights = server.model_mount
    container = client.containers.run(
        server.image, entrypoint=list(command.entrypoint),
        command=[*own, *checks, *command.args[command.args.index("--"):]],
        environment=dict(command.env), network_mode="bridge", labels={TEST_LABEL: run_id}, detach=True,
        mounts=[Mount(weights.target, weights.source, type=weights.kind, read_only=True),
                *mounts])
    try:
        code: int = container.wait(timeout=API_TIMEOUT_SECONDS)["StatusCode"]
        return code, container.logs().decode()
    finally:
        container.remove(force=True)


def rendered_run_without_gpus(c: ContainerSpec, secret_values: Mapping[str, str]) -> str:
    """`docker_run_command` as rendered, minus the lines that ask for GPUs."""
    lines = docker_run_command(c, secret_values).split(RUN_SEPARATOR)
    return RUN_SEPARATOR.join(line for line in lines if not line.startswith(GPU_FLAGS))


def run_rendered(command: str, client: docker.DockerClient) -> Container:
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=API_TIMEOUT_SECONDS,
                          check=False)
    assert done.returncode == 0, f"the rendered docker run failed: {done.stderr.strip()}"
    return client.containers.get(done.stdout.strip())


def health_wait_seconds(c: ContainerSpec) -> int:
    """The first probe runs one interval after the start; allow a second one and some slack."""
    return 2 * nanoseconds(c.healthcheck.interval) // 10**9 + 15


def wait_healthy(container: Container, timeout: float) -> str:
    """The health status once it is no longer `starting`, or `starting` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        container.reload()
        status: str = container.attrs["State"].get("Health", {}).get("Status", "none")
        if status != "starting" or time.monotonic() > deadline:
            return status
        time.sleep(1)


def exec_python(container: Container, code: str) -> tuple[int, str]:
    """Run Python in the container (it has no shell tools but python3): exit code and output."""
    result = container.exec_run(["python3", "-c", code])
    return result.exit_code, result.output.decode(errors="replace")
