"""What the host must have free: GPU memory at start, the Docker runtime named, the host port.

- vLLM requests `gpuMemoryUtilization` x the GPU's CUDA total and refuses to start when less is
  free (v1/worker/utils.py `request_memory`, from `Worker.init_device`): the worker's own CUDA
  context is already resident then, so a request above the total less that context can never be
  met - 1.0 never is.
- Docker refuses a container whose runtime the daemon does not register ("unknown or invalid
  runtime name"): beside runc, the NVIDIA Container Toolkit registers nvidia (and nvidia-cdi,
  nvidia-legacy); a name close to one of them is a typo.
- On an ssh:// Docker host the ssh daemon holds the port the endpoint names (22 by default):
  publishing the API there fails ("port is already allocated" / "address already in use").
"""

from __future__ import annotations

import difflib
import re

from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule

# The smallest gap between CUDA's total and the memory free at vLLM's start in the startup logs
# under tests/fixtures/startup_logs ("Free memory on device (78.84/79.25 GiB) on startup"): what
# the worker's CUDA context and torch hold before the request is compared.
CUDA_CONTEXT_GIB = 0.4
# Runtime names a Docker daemon registers: its own runc, the NVIDIA Container Toolkit's
# (nvidia-ctk runtime configure: nvidia, nvidia-cdi, nvidia-legacy) and the common OCI runtimes.
KNOWN_RUNTIMES = ("runc", "io.containerd.runc.v2", "nvidia", "nvidia-cdi", "nvidia-legacy", "crun", "runsc",
                  "kata", "kata-runtime", "kata-qemu", "youki", "sysbox-runc")
SSH_PORT = 22
_SSH_PORT = re.compile(r"^ssh://(?:[^@/]+@)?(?:\[[^\]]+\]|[^:/]+)(?::(\d+))?")


def _memory_request(ctx: Context) -> Facts | None:
    util = ctx.engine.gpu_memory_utilization
    total = ctx.gpu.cuda_memory_gib
    if util is None or not ctx.settings.hardware.uses_gpus or not total:
        return None
    most = total - CUDA_CONTEXT_GIB
    if util * total <= most:
        return None
    return {"util": util, "request": f"{util * total:.2f}", "total": f"{total:.2f}", "free": f"{most:.2f}",
            "ok": f"{int(most / total * 100) / 100:.2f}", "gpu": ctx.gpu.name}


def _runtime(ctx: Context) -> Facts | None:
    runtime = ctx.settings.container.runtime
    if runtime is None or ctx.settings.target.kind != "docker" or runtime in KNOWN_RUNTIMES:
        return None
    close = difflib.get_close_matches(runtime.lower(), KNOWN_RUNTIMES, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    return {"runtime": runtime, "hint": hint}


def ssh_port(docker_host: str | None) -> int | None:
    """The port an ssh:// Docker endpoint connects to (22 unless given); None for a local socket."""
    found = _SSH_PORT.match(docker_host or "")
    if found is None:
        return None
    return int(found[1]) if found[1] else SSH_PORT


def _host_port(ctx: Context) -> Facts | None:
    if ctx.settings.target.kind != "docker":
        return None
    port = ssh_port(ctx.settings.target.docker_host)
    if port is None or ctx.settings.network.host_port != port:
        return None
    return {"port": port, "host": ctx.settings.target.docker_hostname}


RULES: tuple[Rule, ...] = (
    Rule("gpu-memory-utilization-unsatisfiable", Severity.ERROR, config_key("engine", "gpuMemoryUtilization"),
         "gpuMemoryUtilization {util} asks {request} of the {total} GiB of each {gpu}, but at most {free} GiB "
         "is free when vLLM starts (its CUDA context is already there)",
         "set engine.gpuMemoryUtilization to {ok} or lower (0.9 is vLLM's default)",
         "The request (utilization x CUDA total) stays below the total less the worker's CUDA context: 1.0 "
         "never starts.",
         "vLLM exits at start-up: \"Free memory on device (...) on startup is less than desired GPU memory "
         "utilization\".",
         "vllm/v1/worker/utils.py request_memory; vllm/v1/worker/gpu_worker.py Worker.init_device; "
         "tests/fixtures/startup_logs (the smallest free-memory gap at start)", _memory_request),
    Rule("container-runtime-unknown", Severity.ERROR, config_key("container", "runtime"),
         "container.runtime {runtime} is not a runtime a Docker daemon registers",
         "{hint}remove container.runtime (Docker's default with the GPU request), or name a runtime your "
         "daemon.json registers, e.g. nvidia",
         "A Docker runtime name that is runc, nvidia (nvidia-cdi, nvidia-legacy) or a known OCI runtime.",
         "Docker refuses to create the container: \"unknown or invalid runtime name\"; Pulumi fails mid-update.",
         "this project (vllm_serving/rules/host_resources.py KNOWN_RUNTIMES: Docker's runc, NVIDIA Container "
         "Toolkit's nvidia-ctk runtime names)", _runtime),
    Rule("host-port-in-use", Severity.ERROR, config_key("network", "hostPort"),
         "network.hostPort {port} is the port ssh listens on at {host}, which this stack's Docker endpoint uses",
         "set network.hostPort to a free port, e.g. 8000",
         "On an ssh:// Docker host, hostPort is not the ssh port the endpoint connects to (22 by default).",
         "Docker cannot publish the port: \"address already in use\"; the container never starts.",
         "this project (vllm_serving/settings/target.py docker_endpoint: ssh://user@host[:port])", _host_port),
)
