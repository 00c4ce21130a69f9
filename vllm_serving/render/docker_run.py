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


def flag_words(command: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Pair each flag with its value on one line, as the seeds write them."""
    lines: list[tuple[str, ...]] = []
    i = 0
    while i < len(command):
        word = command[i]
        nxt = command[i + 1] if i + 1 < len(command) else None
        if word.startswith("--") and nxt is not None and (not nxt.startswith("--") or word in _PAIRED):
            lines.append((word, nxt))
            i += 2
        else:
            lines.append((word,))
            i += 1
    return lines


def quoted(line: tuple[str, ...]) -> str:
    return " ".join(shlex.quote(word) for word in line)


def flag_lines(command: tuple[str, ...]) -> list[str]:
    """`flag_words`, each line shell-quoted."""
    return [quoted(line) for line in flag_words(command)]


def _publish(c: ContainerSpec) -> str:
    port = f"{c.host_port}:{c.container_port}"
    if c.bind_address == "0.0.0.0":
        return port
    # an IPv6 address needs brackets, or Docker splits it at its colons
    return f"[{c.bind_address}]:{port}" if ":" in c.bind_address else f"{c.bind_address}:{port}"


def docker_run_lines(c: ContainerSpec, secrets: Mapping[str, str] | None = None) -> list[tuple[str, ...]]:
    """The command as lines of shell words, unquoted: every word is quoted once, when printed."""
    lines: list[tuple[str, ...]] = [("docker", "run", "-d"), ("--name", c.name)]
    if c.runtime:
        lines.append((f"--runtime={c.runtime}",))
    if c.privileged:
        lines.append(("--privileged",))
    lines += [("--security-opt", opt) for opt in c.security_opts]
    if c.gpus is not None:  # None: a CPU target asks for no GPU
        # the inner quotes keep Docker's CSV parser from splitting device=6,7 at the comma
        lines.append(("--gpus", "all" if c.gpus == "all" else f'"{c.gpus}"'))
    lines.append((f"--ipc={c.ipc_mode}",))
    if c.shm_size_mb is not None:
        lines.append(("--shm-size", format_size(c.shm_size_mb * 1024 * 1024)))
    lines.append(("-p", _publish(c)))
    lines += [("-v", m.source + ":" + m.target + (":ro" if m.read_only else "")) for m in c.mounts]
    lines += [("-e", f"{name}={value}") for name, value in c.env]
    lines += [("-e", f"{name}={shown(secrets, name)}") for name in c.secret_env]
    lines += [("--stop-signal", c.stop_signal), ("--stop-timeout", str(c.stop_grace_seconds)),
              ("--restart", c.restart), ("--log-driver", c.log_driver)]
    lines += [("--log-opt", f"{k}={v}") for k, v in c.log_opts]
    hc = c.healthcheck
    lines += [("--health-cmd", shlex.join(hc.tests[1:])), ("--health-interval", hc.interval),
              ("--health-timeout", hc.timeout), ("--health-start-period", hc.start_period),
              ("--health-retries", str(hc.retries))]
    lines += [("--label", f"{k}={v}") for k, v in c.labels]
    return [*lines, (c.image,), *flag_words(c.command)]


def docker_run_command(c: ContainerSpec, secrets: Mapping[str, str] | None = None) -> str:
    """Multi-line `docker run`; `secrets` maps env names to values to reveal them. Every word a
    stack sets is shell-quoted, so no value can run a command when the text is pasted."""
    return " \\\n  ".join(quoted(line) for line in docker_run_lines(c, secrets))
