"""A Docker fleet offline: its plan (shared facts once, then each host) and its renders per host.

What every host runs the same (image, model, argv, mounts, capacity) is computed once, from the
first host's spec; each host adds only where it runs, the GPUs it gives and its URLs. The
capacity plan is per server: every host holds the weights and its own KV cache.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from vllm_serving.findings import Finding
from vllm_serving.fleet import HostSpec, host_resource_name
from vllm_serving.planner.capacity import plan_capacity
from vllm_serving.planner.scale_out import scale_out, scale_out_view
from vllm_serving.render.docker_container import ContainerSpec, container_spec
from vllm_serving.render.docker_run import docker_run_command
from vllm_serving.render.rollout_hints import docker_logs_command
from vllm_serving.spec import ServingSpec
from vllm_serving.views.plan import deployment_plan, planned_docker_resources

ROLLOUT = ("one host at a time, in target.hosts order: each host's server waits for the previous "
           "host's to be healthy, so the fleet never loses every server at once")
FLEET_TYPE = "vllm-serving:docker:VllmFleet"


def host_comment(host: HostSpec) -> str:
    """The line that heads a host's part of a render."""
    return f"# host {host.id} ({host.spec.settings.target.docker_host})"


def per_host(hosts: tuple[HostSpec, ...], render_one: Callable[[ContainerSpec], str], separator: str,
             containers: Sequence[ContainerSpec] | None = None) -> str:
    """Each host's render (text ending in a newline) under its comment line, `separator` between
    hosts: a blank line between commands, `---` between Compose files (YAML documents). Hosts
    with the same container (the same GPUs) share one render; `containers`, one per host, if known."""
    rendered: dict[ContainerSpec, str] = {}
    parts = []
    for i, h in enumerate(hosts):
        c = containers[i] if containers else container_spec(h.spec)
        if c not in rendered:
            rendered[c] = render_one(c)
        parts.append(f"{host_comment(h)}\n{rendered[c]}")
    return separator.join(parts)


def docker_run_text(c: ContainerSpec) -> str:
    """One host's `docker run`, secrets masked, ending in a newline."""
    return docker_run_command(c) + "\n"


def select_hosts(hosts: tuple[HostSpec, ...], wanted: str | None) -> tuple[HostSpec, ...]:
    """Every host, or the one whose id is `wanted`; ValueError naming the ids for an unknown one."""
    if wanted is None:
        return hosts
    found = tuple(h for h in hosts if h.id == wanted)
    if not found:
        raise ValueError(f"no host {wanted!r} in target.hosts; the hosts are {', '.join(h.id for h in hosts)}")
    return found


def planned_fleet_resources(spec: ServingSpec, hosts: tuple[HostSpec, ...]) -> list[tuple[str, str]]:
    """(type token, logical name) of everything the fleet registers: one deployment per host."""
    found = [(FLEET_TYPE, spec.name)]
    for host in hosts:
        found += planned_docker_resources(host.spec, host_resource_name(spec, host))
    return found


def host_view(host: HostSpec, c: ContainerSpec) -> dict[str, Any]:
    """One host, whose container is `c`, as the plan and the stack outputs show it."""
    target = host.spec.settings.target
    return {
        "name": host.id,
        "dockerHost": target.docker_host,
        "gpusGiven": c.gpus,
        **host.spec.endpoints(),
        "containerName": c.name,
        "logsCommand": docker_logs_command(c, target.docker_host),
    }


def fleet_plan(spec: ServingSpec, hosts: tuple[HostSpec, ...], findings: list[Finding]) -> dict[str, Any]:
    """`deployment_plan` for a fleet: the shared facts of the first host, then `hosts` (each host's
    place and URLs), the aggregate `endpoints` list, the rollout order and every host's resources."""
    plan = deployment_plan(hosts[0].spec, findings)
    containers = [container_spec(h.spec) for h in hosts]
    views = [host_view(h, c) for h, c in zip(hosts, containers, strict=True)]
    given = {v["gpusGiven"] for v in views}
    count = f"{len(hosts)} host" + ("s" if len(hosts) > 1 else "")
    plan["target"] = {"kind": "docker", "where": f"{count}: " + ", ".join(v["name"] for v in views)}
    plan["gpu"]["given"] = given.pop() if len(given) == 1 else "per host"
    plan["endpoints"] = {}
    plan["fleet"] = {"hosts": views, "endpoints": [v["baseUrl"] for v in views], "rollout": ROLLOUT}
    # every host is one more server: its own weights and KV cache, as Kubernetes replicas are
    layout = msgspec.structs.replace(scale_out(spec.settings), replicas=len(hosts))
    plan["scaleOut"] = scale_out_view(layout, plan_capacity(hosts[0].spec))
    plan["resources"] = [{"type": t, "name": n} for t, n in planned_fleet_resources(spec, hosts)]
    plan["dockerRunCommand"] = per_host(hosts, docker_run_text, "\n", containers).rstrip("\n")
    return plan


def host_lines(plan: Mapping[str, Any]) -> list[str]:
    """The plan's hosts as text rows (`vllm-stack plan`)."""
    return [f"{v['name']:<14} {v['dockerHost']}  GPUs {v['gpusGiven'] or 'none (CPU)'}  {v['baseUrl']}"
            for v in plan["fleet"]["hosts"]]
