"""A Docker fleet (`target.hosts`): the host list itself, and every other rule run per host.

The table's rules read the whole host list (a host twice, two hosts behind one URL, a fleet on
Kubernetes). `check_fleet` then runs the one-server rules on each host's own spec
(vllm_serving/fleet.py), so a host whose `deviceIds` give fewer GPUs than TP x PP is refused
with `target.hosts[i].deviceIds`. The rules see a host through its GPUs, not its address
(tests/fleet/test_fleet_rules.py holds this), so hosts with the same GPUs share one run and one
capacity plan: a 32-host fleet costs about what one host does (benchmarks/fleet_plan.py).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from vllm_serving.findings import Finding, Severity, config_key
from vllm_serving.fleet import HOST_KEYS, HostSpec, fleet_hosts
from vllm_serving.rules.base import KEY, Context, Facts, Rule
from vllm_serving.settings.ssh_options import unchecked_host_key
from vllm_serving.settings.target import ssh_hostname
from vllm_serving.spec import ServingSpec

HOSTS = config_key("target", "hosts")
# Codes whose cause is how many GPUs the container gets: on a host with its own deviceIds, that key.
GPUS_GIVEN_CODES = frozenset({"parallel-exceeds-gpus", "parallel-gpus-idle"})
SRC = "vllm_serving/fleet.py; components/docker/fleet.py (one provider and deployment per host)"


def _hosts(ctx: Context) -> bool:
    return bool(ctx.settings.target.hosts)


def _docker_fleet(ctx: Context) -> bool:
    return _hosts(ctx) and ctx.settings.target.kind == "docker"


def _on_kubernetes(ctx: Context) -> Facts | None:
    if _hosts(ctx) and ctx.settings.target.kind == "kubernetes":
        return {"count": len(ctx.settings.target.hosts)}
    return None


def _docker_host_too(ctx: Context) -> Facts | None:
    target = ctx.settings.target
    return {"host": target.docker_host} if _docker_fleet(ctx) and target.docker_host else None


def _repeated_endpoint(ctx: Context) -> list[Facts] | None:
    if not _docker_fleet(ctx):
        return None
    first: dict[str, int] = {}
    found: list[Facts] = []
    for i, host in enumerate(ctx.settings.target.hosts):
        if host.docker_host in first:
            found.append({KEY: config_key("target", "hosts", i, "dockerHost"), "host": host.docker_host,
                          "first": first[host.docker_host], "name": ctx.spec.name,
                          "port": ctx.settings.network.host_port})
        first.setdefault(host.docker_host, i)
    return found or None


def _repeated_id(ctx: Context) -> list[Facts] | None:
    if not _docker_fleet(ctx):
        return None
    seen: dict[str, int] = {}
    found: list[Facts] = []
    hosts = ctx.settings.target.hosts
    for i, host in enumerate(hosts):
        j = seen.setdefault(host.id, i)
        if j != i and hosts[j].docker_host != host.docker_host:  # the same endpoint twice is reported above
            found.append({KEY: config_key("target", "hosts", i, "name"), "id": host.id, "first": j})
    return found or None


def _url_source(ctx: Context, host: HostSpec) -> tuple[str, str]:
    """(key, fix) for where a host's public host comes from."""
    own = f"set {_dotted(host.key('publicHost'))} to the name clients use for that host"
    if host.sets("publicHost"):
        return host.key("publicHost"), own
    if ctx.settings.network.public_host:
        return (config_key("network", "publicHost"),
                "remove network.publicHost and give each host its own publicHost under target.hosts")
    if ssh_hostname(host.host.docker_host) is None or ctx.settings.network.bind_address not in ("0.0.0.0", "::"):
        return (config_key("network", "bindAddress"),
                "give each host its own publicHost under target.hosts (a bind address or a local socket "
                "names no host clients can tell apart)")
    return host.key("dockerHost"), own


def _dotted(key: str) -> str:
    """`target.hosts[1].publicHost` of `vllm-serving:target.hosts[1].publicHost`, as fixes write keys."""
    return key.split(":", 1)[1]


def _repeated_url(ctx: Context) -> list[Facts] | None:
    if not _docker_fleet(ctx):
        return None
    seen: dict[str, HostSpec] = {}
    found: list[Facts] = []
    for host in fleet_hosts(ctx.spec):
        origin = host.spec.origin
        other = seen.setdefault(origin, host)
        if other is not host and other.host.docker_host != host.host.docker_host:
            key, fix = _url_source(ctx, host)
            found.append({KEY: key, "fix": fix, "origin": origin, "i": host.index, "j": other.index})
    return found or None


def _ids_beyond_count(ctx: Context) -> list[Facts] | None:
    if not _docker_fleet(ctx):
        return None
    hw = ctx.settings.hardware
    found: list[Facts] = [
        {KEY: config_key("target", "hosts", i, "deviceIds"), "id": max(host.device_ids), "count": hw.count,
         "last": hw.count - 1}
        for i, host in enumerate(ctx.settings.target.hosts)
        if hw.uses_gpus and host.device_ids and max(host.device_ids) >= hw.count]
    return found or None


def _ids_on_cpu(ctx: Context) -> list[Facts] | None:
    if not _docker_fleet(ctx) or ctx.settings.hardware.uses_gpus:
        return None
    found: list[Facts] = [{KEY: config_key("target", "hosts", i, "deviceIds")}
                          for i, host in enumerate(ctx.settings.target.hosts) if host.device_ids is not None]
    return found or None


RULES: tuple[Rule, ...] = (
    Rule("fleet-on-kubernetes", Severity.ERROR, HOSTS,
         "target.hosts lists {count} Docker hosts, but target.kind is kubernetes",
         "remove target.hosts; on a cluster, kubernetes.replicas runs several servers behind one Service",
         "target.hosts only with target.kind docker.",
         "The Kubernetes backend deploys to the cluster of the kubeconfig context; the host list would be ignored.",
         SRC, _on_kubernetes),
    Rule("fleet-docker-host-with-hosts", Severity.ERROR, config_key("target", "dockerHost"),
         "target.dockerHost ({host}) names one host, and target.hosts lists the fleet",
         "move it into target.hosts as one more entry (dockerHost: {host}), or remove target.hosts",
         "A fleet names every host under target.hosts; target.dockerHost is not a default for them.",
         "Two places for one fact: a host left out of target.hosts would look deployed and never be.",
         SRC, _docker_host_too),
    Rule("fleet-host-repeated", Severity.ERROR, HOSTS,
         "{host} is listed again (as target.hosts[{first}] already)",
         "remove this entry: one host runs one server of a stack (container {name} and port {port} are fixed)",
         "Each dockerHost appears once in target.hosts.",
         "The second deployment on the host fails: the container name and the host port are taken.",
         SRC, _repeated_endpoint),
    Rule("fleet-host-id-repeated", Severity.ERROR, HOSTS,
         "two hosts have the id {id} (target.hosts[{first}] too)",
         "set name on this entry to an id no other host has; it keys the host's resources and outputs",
         "Host ids (name, else the ssh host's first label) are unique.",
         "Pulumi refuses two resources of one name; the outputs would hold one host.",
         SRC, _repeated_id),
    Rule("fleet-url-repeated", Severity.ERROR, HOSTS,
         "target.hosts[{i}] and target.hosts[{j}] are both reached at {origin}",
         "{fix}",
         "Each host has its own public host and port (the URLs a load balancer balances over).",
         "Two hosts behind one URL: clients and the load balancer reach only one of them.",
         "vllm_serving/spec.py ServingSpec.origin", _repeated_url),
    Rule("fleet-device-id-missing", Severity.ERROR, HOSTS,
         "device id {id} does not exist on a host with {count} GPUs (ids 0-{last})",
         "pick ids below {count}, or raise hardware.count if every host has more GPUs",
         "A host's deviceIds exist on a host of hardware.count GPUs.",
         "Docker refuses the device request and the container never starts.",
         SRC, _ids_beyond_count),
    Rule("fleet-device-ids-on-cpu", Severity.ERROR, HOSTS,
         "a CPU target has no GPU ids to give the container",
         "remove deviceIds from this host",
         "No deviceIds on a host of a CPU fleet (hardware.device: cpu).",
         "The container would ask the host for GPUs vLLM's CPU image never uses.",
         SRC, _ids_on_cpu),
)


def host_finding(finding: Finding, host: HostSpec) -> Finding:
    """A finding of a host's own spec, named by the host's key when the host gives that value."""
    field = next((alias for alias, single in HOST_KEYS.items() if single == finding.key and host.sets(alias)), None)
    if field is None and finding.code in GPUS_GIVEN_CODES and host.sets("deviceIds"):
        field = "deviceIds"
    if field is None:
        return finding
    single, local = _dotted(HOST_KEYS[field]), _dotted(host.key(field))
    return msgspec.structs.replace(finding, key=host.key(field), message=f"{finding.message} (host {host.id})",
                               fix=finding.fix.replace(single, local))


def rules_view(host: HostSpec) -> object:
    """What tells hosts apart for the one-server rules: the GPUs given, and a local socket from
    an ssh host, and the options that turn off its host-key check (rules/ssh_link.py). Hosts equal
    here get the same findings (only the keys name each host)."""
    target = host.spec.settings.target
    unchecked = tuple(text for _, text in unchecked_host_key(target.ssh_opts))
    return host.spec.settings.hardware.device_ids, target.docker_hostname is None, unchecked


def check_fleet(spec: ServingSpec, hosts: tuple[HostSpec, ...],
                check_host: Callable[[ServingSpec], list[Finding]]) -> list[Finding]:
    """This table over the host list, then `check_host` once per group of hosts the rules cannot
    tell apart (the same GPUs, both remote or both local); errors first."""
    ctx = Context(spec)
    findings = [f for rule in RULES for f in rule.run(ctx)]
    if spec.promotion is not None:
        findings = [spec.promotion.attribute(f) for f in findings]
    groups: dict[object, list[HostSpec]] = {}
    for host in hosts:
        groups.setdefault(rules_view(host), []).append(host)
    seen = set(findings)
    for group in groups.values():
        for finding in check_host(group[0].spec):
            for host in group:
                if (named := host_finding(finding, host)) not in seen:
                    seen.add(named)
                    findings.append(named)
    return sorted(findings, key=lambda f: f.severity != Severity.ERROR)
