"""A fleet's bad inputs, each refused with its key and fix before anything is registered; the
one-server rules per host; host defaults; sharing rule runs between hosts changes no finding."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fleet.fleet_stacks import fleet_config, fleet_hosts_config, fleet_spec
from tests.paths import PROJECT_DIR
from tests.pulumi_harness import ProgramFailed, run_program
from tests.stack_builders import make_spec
from vllm_serving.findings import ConfigError, Finding, Severity
from vllm_serving.fleet import fleet_hosts
from vllm_serving.rules import check
from vllm_serving.rules import fleet as fleet_rules
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import ServingSpec, resolve

GPU01 = "ssh://deploy@gpu01.example.internal"


def _errors(spec_findings: list[Finding]) -> dict[str, set[str]]:
    """Error code -> the keys it names."""
    found: dict[str, set[str]] = {}
    for f in spec_findings:
        if f.severity is Severity.ERROR:
            found.setdefault(f.code, set()).add(f.key.removeprefix("vllm-serving:"))
    return found


def _hosts(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [*fleet_hosts_config(), *extra]


def test_the_fleet_stack_passes() -> None:
    assert _errors(check(fleet_spec())) == {}


BAD_FLEETS: dict[str, tuple[dict[str, Any], str, str]] = {
    # name: (changes, code, key)
    "host listed twice": ({"hosts": _hosts({"dockerHost": GPU01, "name": "again"})},
                          "fleet-host-repeated", "target.hosts[3].dockerHost"),
    "two hosts behind one public host": (
        {"hosts": _hosts({"dockerHost": "ssh://deploy@10.0.0.14", "name": "gpu04",
                          "publicHost": "gpu03.example.internal"})},
        "fleet-url-repeated", "target.hosts[3].publicHost"),
    "one shared network.publicHost": ({"network": {"publicHost": "lb.example.internal"}},
                                      "fleet-url-repeated", "network.publicHost"),
    "a loopback bind address on every host": ({"network": {"bindAddress": "127.0.0.1"}},
                                              "fleet-url-repeated", "network.bindAddress"),
    "two hosts with one id": ({"hosts": _hosts({"dockerHost": "ssh://deploy@gpu01.other.internal"})},
                              "fleet-host-id-repeated", "target.hosts[3].name"),
    "target.dockerHost beside the list": ({"target": {"dockerHost": GPU01}},
                                          "fleet-docker-host-with-hosts", "target.dockerHost"),
    "hosts on a Kubernetes target": ({"target": {"kind": "kubernetes"}}, "fleet-on-kubernetes", "target.hosts"),
    "a GPU id the host does not have": (
        {"hosts": _hosts({"dockerHost": "ssh://deploy@gpu04.example.internal", "deviceIds": [5, 6, 7, 8]})},
        "fleet-device-id-missing", "target.hosts[3].deviceIds"),
    "a host with fewer GPUs than TP x PP": (
        {"hosts": _hosts({"dockerHost": "ssh://deploy@gpu04.example.internal", "deviceIds": [6, 7]})},
        "parallel-exceeds-gpus", "target.hosts[3].deviceIds"),
    "a server across nodes on the Docker fleet": ({"kubernetes": {"nodes": 2}}, "multi-node-on-docker",
                                                  "kubernetes.nodes"),
}


def _config(changes: dict[str, Any]) -> dict[str, Any]:
    changes = dict(changes)
    hosts = changes.pop("hosts", None)
    return fleet_config(hosts, **changes)


def _spec(changes: dict[str, Any]) -> ServingSpec:
    return resolve(parse_stack_config(_config(changes)), "fleet", project_dir=PROJECT_DIR)


@pytest.mark.parametrize("name", sorted(BAD_FLEETS))
def test_bad_fleet_is_refused_with_its_key(name: str) -> None:
    changes, code, key = BAD_FLEETS[name]
    errors = _errors(check(_spec(changes)))
    assert key in errors.get(code, set()), errors
    finding = next(f for f in check(_spec(changes)) if f.code == code)
    assert finding.fix, "every finding says what to change"


@pytest.mark.parametrize("name", ["host listed twice", "two hosts behind one public host",
                                  "a host with fewer GPUs than TP x PP"])
def test_program_refuses_a_bad_fleet_before_any_resource(name: str) -> None:
    changes, code, key = BAD_FLEETS[name]
    with pytest.raises(ProgramFailed) as failed:
        run_program(_config(changes), stack="fleet")
    assert failed.value.resources == []
    assert f"vllm-serving:{key}" in str(failed.value)


def test_fewer_gpus_names_the_host_and_its_key_in_the_fix() -> None:
    changes, _, _ = BAD_FLEETS["a host with fewer GPUs than TP x PP"]
    [finding] = [f for f in check(_spec(changes)) if f.code == "parallel-exceeds-gpus"]
    assert "(host gpu04)" in finding.message
    assert "target.hosts[3].deviceIds" in finding.fix and "hardware.deviceIds" not in finding.fix


@pytest.mark.parametrize(("host", "key"), [
    ({"dockerHost": "tcp://gpu09.example.internal:2375"}, "target.hosts[3].dockerHost"),
    ({"dockerHost": "ssh://deploy@gpu09.example.internal", "deviceIds": []}, "target.hosts[3].deviceIds"),
    ({"dockerHost": "ssh://deploy@gpu09.example.internal", "deviceIds": [1, 1]}, "target.hosts[3].deviceIds"),
    ({"dockerHost": "ssh://deploy@gpu09.example.internal", "name": "GPU 9"}, "target.hosts[3].name"),
    ({"dockerHost": "ssh://deploy@gpu09.example.internal", "publicHost": "http://gpu09"},
     "target.hosts[3].publicHost"),
    ({"name": "gpu09"}, "target.hosts[3].dockerHost"),
    ({"dockerHost": "ssh://deploy@gpu09.example.internal", "port": 8001}, "target.hosts[3].port"),
])
def test_bad_host_entry_is_a_config_error(host: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as failed:
        parse_stack_config(fleet_config(_hosts(host)))
    assert f"vllm-serving:{key}" in {f.key for f in failed.value.findings}


def test_hosts_take_the_single_host_keys_as_defaults() -> None:
    spec = fleet_spec(hosts=[
        {"dockerHost": "ssh://deploy@gpu01.example.internal"},
        {"dockerHost": "ssh://deploy@gpu02.example.internal", "sshOpts": ["-o", "Port=2222"], "deviceIds": [4, 5, 6, 7],
         "publicHost": "vllm-b.example.internal"},
    ], network={"publicHost": None})
    first, second = (h.spec.settings for h in fleet_hosts(spec))
    assert first.target.ssh_opts == ("-o", "StrictHostKeyChecking=yes")
    assert first.hardware.device_ids == (0, 1, 2, 3)
    assert second.target.ssh_opts == ("-o", "Port=2222")
    assert second.hardware.device_ids == (4, 5, 6, 7)
    assert [h.spec.endpoints()["baseUrl"] for h in fleet_hosts(spec)] == [
        "http://gpu01.example.internal:8000/v1", "http://vllm-b.example.internal:8000/v1"]
    # a host's spec is one server: no hosts of its own
    assert all(h.spec.settings.target.hosts == () for h in fleet_hosts(spec))


def test_host_ids_come_from_the_docker_host() -> None:
    spec = fleet_spec(hosts=[{"dockerHost": "ssh://deploy@GPU07.example.internal:2222"},
                             {"dockerHost": "ssh://10.1.2.3"}, {"dockerHost": "ssh://[fd00::7]"},
                             {"dockerHost": "unix:///var/run/docker.sock"}])
    assert [h.id for h in fleet_hosts(spec)] == ["gpu07", "10-1-2-3", "fd00-7", "local"]


VARIED_HOSTS = [
    {"dockerHost": "ssh://deploy@gpu01.example.internal"},
    {"dockerHost": "ssh://gpu02.example.internal:2222", "sshOpts": ["-o", "IdentityFile=/keys/fleet"]},
    {"dockerHost": "ssh://ops@10.0.0.13", "publicHost": "gpu03.example.internal", "name": "gpu03"},
    {"dockerHost": "ssh://deploy@gpu04.example.internal", "deviceIds": [0, 1]},
]


@pytest.mark.parametrize("stack", ["v100", "a100", "local"])
def test_sharing_rule_runs_between_hosts_changes_no_finding(stack: str, monkeypatch) -> None:
    """Hosts with the same GPUs share one run of the one-server rules (that is what keeps a
    32-host plan fast); run each host alone instead and the findings are the same."""
    sections: dict[str, Any] = {"target": {"dockerHost": None, "hosts": VARIED_HOSTS}}
    if stack == "local":  # a CPU stack: no GPU ids, and an address clients can reach
        sections["target"]["hosts"] = [{k: v for k, v in h.items() if k != "deviceIds"} for h in VARIED_HOSTS]
        sections["network"] = {"bindAddress": "0.0.0.0"}
    spec = make_spec(stack, **sections)
    shared = check(spec)
    monkeypatch.setattr(fleet_rules, "rules_view", lambda host: host.index)
    alone = check(spec)
    assert sorted(map(repr, shared)) == sorted(map(repr, alone))


def test_a_kubernetes_stack_with_hosts_is_not_expanded() -> None:
    spec = fleet_spec(target={"kind": "kubernetes"})
    assert fleet_hosts(spec) == ()
