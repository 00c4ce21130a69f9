"""The `docker run` command equivalent to a container spec, as an operator would type it.

Operators compare it with the command they ran before. Secret values are masked unless given.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from vllm_serving.masking import shown
from vllm_serving.render.docker_container import ContainerSpec
from vllm_serving.units import format_size

_PAIRED = {"--speculative-config"}


def flag_lines(command: tuple[str, ...]) -> list[str]:
    """Pair each flag with its value on one line, as the seeds write them."""
    lines: list[str] = []
    i = 0
    while i < len(command):
        word = command[i]
        nxt = command[i + 1] if i + 1 < len(command) else None
        if word.startswith("--") and nxt is not None and (not nxt.startswith("--") or word in _PAIRED):
            lines.append(f"{shlex.quote(word)} {shlex.quote(nxt)}")
            i += 2
        else:
            lines.append(shlex.quote(word))
            i += 1
    return lines


def docker_run_command(c: ContainerSpec, secrets: Mapping[str, str] | None = None) -> str:
    """Multi-line `docker run`; `secrets` maps env names to values to reveal them."""
    opts = ["-d", f"--name {shlex.quote(c.name)}"]
    if c.runtime:
        opts.append(f"--runtime={shlex.quote(c.runtime)}")
    if c.privileged:
        opts.append("--privileged")
    # the inner quotes keep Docker's CSV parser from splitting device=6,7 at the comma
    opts.append("--gpus all" if c.gpus == "all" else f"--gpus '\"{c.gpus}\"'")
    opts.append(f"--ipc={c.ipc_mode}")
    if c.shm_size_mb is not None:
        opts.append(f"--shm-size {format_size(c.shm_size_mb * 1024 * 1024)}")
    publish = f"{c.host_port}:{c.container_port}"
    opts.append(f"-p {publish}" if c.bind_address == "0.0.0.0" else f"-p {c.bind_address}:{publish}")
    for m in c.mounts:
        opts.append(f"-v {shlex.quote(m.source + ':' + m.target + (':ro' if m.read_only else ''))}")
    for name, value in c.env:
        opts.append(f"-e {shlex.quote(f'{name}={value}')}")
    for name in c.secret_env:
        value = shown(secrets, name)
        opts.append(f"-e {shlex.quote(f'{name}={value}')}")
    opts.append(f"--stop-signal {c.stop_signal}")
    opts.append(f"--stop-timeout {c.stop_grace_seconds}")
    opts.append(f"--restart {c.restart}")
    opts.append(f"--log-driver {c.log_driver}")
    opts += [f"--log-opt {k}={v}" for k, v in c.log_opts]
    hc = c.healthcheck
    opts.append(f"--health-cmd {shlex.quote(shlex.join(hc.tests[1:]))}")
    opts += [f"--health-interval {hc.interval}", f"--health-timeout {hc.timeout}",
             f"--health-start-period {hc.start_period}", f"--health-retries {hc.retries}"]
    opts += [f"--label {shlex.quote(f'{k}={v}')}" for k, v in c.labels]
    lines = ["docker run " + opts[0], *opts[1:], shlex.quote(c.image), *flag_lines(c.command)]
    return " \\\n  ".join(lines)
