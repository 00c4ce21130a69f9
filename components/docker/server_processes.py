"""The host PIDs of the server being replaced, from the Docker engine (`docker top`): what the
preflight's memory check cannot see from its container, where NVML names GPU processes by host PID.

Asked when the preflight has run (during `pulumi up`, never in a preview: the PIDs change with
every restart), over the connection the stack's Docker provider uses: the engine's socket or a TCP
address through its HTTP API (`GET /containers/{name}/top`, whose PID column is the daemon's view,
the host's), an `ssh://` host through `ssh [sshOpts] host docker top NAME` (the provider's own ssh
runs `docker system dial-stdio` there, so the remote has the docker CLI). No container of that name,
or one not running, holds nothing: an empty set. Anything else is a reason, and the preflight's own
verdict stands.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence

import httpx

DEFAULT_HOST = "unix:///var/run/docker.sock"
SECONDS = 20
SSH_HOST = re.compile(r"ssh://(?:(?P<user>[^@/]+)@)?(?P<host>\[[^\]]+\]|[^:/]+)(?::(?P<port>\d+))?/?")
NOT_HOLDING = ("no such container", "is not running")


def server_pids(docker_host: str | None, ssh_opts: Sequence[str], name: str) -> frozenset[int] | str:
    """The host PIDs of container `name`'s processes, or why they cannot be known."""
    host = docker_host or os.environ.get("DOCKER_HOST") or DEFAULT_HOST
    try:
        if host.startswith("ssh://"):
            return _over_ssh(host, ssh_opts, name)
        return _over_api(host, name)
    except (OSError, httpx.HTTPError, subprocess.SubprocessError, ValueError) as exc:
        return f"Docker's process list of {name} could not be read ({type(exc).__name__}: {exc})"


def _over_api(host: str, name: str) -> frozenset[int] | str:
    if host.startswith("unix://"):
        transport, base = httpx.HTTPTransport(uds=host.removeprefix("unix://")), "http://docker"
    elif host.startswith("tcp://") and not os.environ.get("DOCKER_TLS_VERIFY"):
        transport, base = httpx.HTTPTransport(), "http://" + host.removeprefix("tcp://")
    else:
        return f"Docker at {host} is not asked for process lists (TLS or another scheme)"
    with httpx.Client(transport=transport, base_url=base, timeout=SECONDS) as client:
        response = client.get(f"/containers/{name}/top")
    if response.status_code in (404, 409):  # no such container / not running
        return frozenset()
    response.raise_for_status()
    found = response.json()
    return _pids(found["Titles"], found["Processes"] or [])


def _over_ssh(host: str, ssh_opts: Sequence[str], name: str) -> frozenset[int] | str:
    endpoint = SSH_HOST.fullmatch(host)
    if endpoint is None:
        return f"{host} is no ssh://[user@]host[:port] address"
    user, address, port = endpoint.group("user"), endpoint.group("host").strip("[]"), endpoint.group("port")
    endpoint_options = [*(["-p", port] if port else []), *(["-l", user] if user else [])]
    # BatchMode: never a password prompt in the middle of `pulumi up`
    command = ["ssh", "-o", "BatchMode=yes", *ssh_opts, *endpoint_options, "--", address, "docker", "top", name]
    done = subprocess.run(command, capture_output=True, text=True, timeout=SECONDS, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        return frozenset() if any(n in said.lower() for n in NOT_HOLDING) else f"`docker top` over ssh: {said[:200]}"
    rows = [line.split() for line in done.stdout.splitlines() if line.strip()]
    return _pids(rows[0], rows[1:]) if rows else frozenset()


def _pids(titles: Sequence[str], rows: Sequence[Sequence[str]]) -> frozenset[int]:
    column = list(titles).index("PID")
    return frozenset(int(row[column]) for row in rows)
