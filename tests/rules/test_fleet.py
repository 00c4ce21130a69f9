"""fleet.py at its boundaries: the host list of a Docker fleet (`target.hosts`).

The fleet end to end (per-host rules, the program, the views) is tests/fleet/.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.rules.boundary import Boundary, check_boundary, codes, findings
from vllm_serving.settings.target import FleetHost


def host(n: int, **fields: Any) -> FleetHost:
    return FleetHost(docker_host=f"ssh://deploy@gpu{n:02d}.example.internal", **fields)


def fleet(*hosts: FleetHost, **target: Any) -> dict[str, Any]:
    """A target section (edits) listing `hosts`."""
    return {"target": {"hosts": hosts, **target}}


A, B, C = host(1), host(2), host(3)

BOUNDARIES = [
    Boundary("fleet-on-kubernetes", "a100-k8s", fleet(A, B), fleet(), "kubernetes: 2 hosts -> none",
             says=("kubernetes.replicas",)),
    Boundary("fleet-docker-host-with-hosts", "a100", fleet(A, B, docker_host="ssh://deploy@gpu00.example.internal"),
             fleet(A, B), "dockerHost beside hosts -> hosts alone",
             says=("dockerHost: ssh://deploy@gpu00.example.internal",)),
    Boundary("fleet-host-repeated", "a100", fleet(A, B, host(1, name="again")), fleet(A, B, C),
             "gpu01 twice -> gpu03", key="vllm-serving:target.hosts[2].dockerHost",
             says=("as target.hosts[0] already", "container vllm and port 8000")),
    Boundary("fleet-host-id-repeated", "a100",
             fleet(A, FleetHost(docker_host="ssh://ops@gpu01.other.example")),
             fleet(A, FleetHost(docker_host="ssh://ops@gpu01.other.example", name="gpu01-other")),
             "id gpu01 twice -> gpu01-other", key="vllm-serving:target.hosts[1].name"),
    Boundary("fleet-url-repeated", "a100",
             fleet(host(1, public_host="vllm.example"), host(2, public_host="vllm.example")),
             fleet(host(1, public_host="vllm.example"), host(2, public_host="vllm-2.example")),
             "publicHost vllm.example twice -> vllm-2.example", key="vllm-serving:target.hosts[1].publicHost",
             says=("http://vllm.example:8000", "target.hosts[1].publicHost")),
    Boundary("fleet-device-id-missing", "a100", fleet(A, host(2, device_ids=(7, 8, 9, 10))),
             fleet(A, host(2, device_ids=(6, 7, 8, 9))), "ids 7-10 -> 6-9 on 10 GPUs",
             key="vllm-serving:target.hosts[1].deviceIds", says=("device id 10", "ids 0-9")),
    Boundary("fleet-device-ids-on-cpu", "local", fleet(host(1, device_ids=(0,))), fleet(host(1)),
             "CPU host: deviceIds [0] -> none", key="vllm-serving:target.hosts[0].deviceIds"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=lambda c: c.id)
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_one_endpoint_listed_twice_is_one_finding_not_two() -> None:
    """The same dockerHost twice also repeats its id: fleet-host-repeated says it, with the entry to remove."""
    found = codes("a100", fleet(A, host(1)))
    assert "fleet-host-repeated" in found and "fleet-host-id-repeated" not in found


def test_a_shared_public_host_names_network_public_host_word_for_word() -> None:
    (hit,) = [f for f in findings("a100", {**fleet(A, B), "network": {"public_host": "vllm.example"}})
              if f.code == "fleet-url-repeated"]
    assert (hit.key, hit.message, hit.fix) == (
        "vllm-serving:network.publicHost",
        "target.hosts[1] and target.hosts[0] are both reached at http://vllm.example:8000",
        "remove network.publicHost and give each host its own publicHost under target.hosts")


def test_a_gpu_fleet_may_give_each_host_its_own_gpus() -> None:
    """deviceIds are refused on a CPU fleet only: a GPU host picks its GPUs with them."""
    found = codes("a100", fleet(host(1, device_ids=(0, 1, 2, 3)), host(2, device_ids=(4, 5, 6, 7))))
    assert "fleet-device-ids-on-cpu" not in found


def test_two_ssh_users_of_one_host_name_the_second_entry_s_docker_host() -> None:
    """Nothing sets a public host, so each host is reached at its ssh host name: the entry that
    repeats it is the one to change, and its fix names the key that tells the two apart."""
    twin = FleetHost(docker_host="ssh://ops@gpu01.example.internal", name="gpu01-ops")
    (hit,) = [f for f in findings("a100", fleet(A, twin)) if f.code == "fleet-url-repeated"]
    assert (hit.key, hit.message, hit.fix) == (
        "vllm-serving:target.hosts[1].dockerHost",
        "target.hosts[1] and target.hosts[0] are both reached at http://gpu01.example.internal:8000",
        "set target.hosts[1].publicHost to the name clients use for that host")


def test_a_host_s_own_finding_names_the_host_and_its_entry() -> None:
    """a100 runs TP 4: a host given two GPUs is refused at its own deviceIds, the message naming it."""
    (hit,) = [f for f in findings("a100", fleet(A, host(2, device_ids=(0, 1))))
              if f.code == "parallel-exceeds-gpus"]
    assert (hit.key, hit.message, hit.fix) == (
        "vllm-serving:target.hosts[1].deviceIds",
        "TP 4 x PP 1 needs 4 GPUs but the container gets 2 (host gpu02)",
        "give the container 4 GPUs (target.hosts[1].deviceIds) or lower the TP/PP sizes")
