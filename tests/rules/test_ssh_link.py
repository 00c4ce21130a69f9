"""ssh_link.py: sshOpts that turn off the check of the Docker host's key, over which the registry
password and the API key travel."""

from __future__ import annotations

from typing import Any

import pytest

from tests.rules.boundary import Boundary, check_boundary, findings
from vllm_serving.settings.ssh_options import refusals, unchecked_host_key
from vllm_serving.settings.target import FleetHost

REMOTE = "ssh://deploy@gpu01.example.internal"


def ssh(*options: str, docker_host: str = REMOTE) -> dict[str, Any]:
    return {"target": {"docker_host": docker_host, "ssh_opts": options}}


BOUNDARIES = [
    Boundary("ssh-host-key-unchecked", "v100", ssh("-o StrictHostKeyChecking=no"),
             ssh("-o StrictHostKeyChecking=accept-new"), "StrictHostKeyChecking no -> accept-new",
             says=("StrictHostKeyChecking=no", "registry password", "ssh-keyscan", "known_hosts")),
    Boundary("ssh-host-key-unchecked", "v100", ssh("-o", "UserKnownHostsFile=/dev/null"),
             ssh("-o", "UserKnownHostsFile=~/.ssh/known_hosts"), "known_hosts /dev/null -> a file",
             says=("UserKnownHostsFile=/dev/null",)),
    Boundary("ssh-host-key-unchecked", "v100", ssh("-oStrictHostKeyChecking=No"),
             ssh("-oStrictHostKeyChecking=No", docker_host="unix:///var/run/docker.sock"),
             "ssh host -> the local socket (no ssh)", says=("StrictHostKeyChecking=No",)),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=lambda c: c.id)
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_both_options_are_named_once_each() -> None:
    options = ("-o StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o ConnectTimeout=30")
    assert refusals(options) == []  # allowed: people need them on first contact
    assert unchecked_host_key(options) == [(0, "StrictHostKeyChecking=no"), (1, "UserKnownHostsFile=/dev/null")]
    hits = [f for f in findings("v100", ssh(*options)) if f.code == "ssh-host-key-unchecked"]
    assert len(hits) == 1
    assert "StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null" in hits[0].message


def test_a_fleet_names_the_host_whose_options_turn_it_off() -> None:
    """Hosts that differ only in sshOpts are checked apart: the finding names the one host."""
    hosts = (FleetHost(docker_host="ssh://deploy@gpu01.example.internal", ssh_opts=("-o StrictHostKeyChecking=no",)),
             FleetHost(docker_host="ssh://deploy@gpu02.example.internal"),
             FleetHost(docker_host="ssh://deploy@gpu03.example.internal", ssh_opts=("-o ConnectTimeout=30",)))
    hits = [f for f in findings("v100", {"target": {"docker_host": None, "hosts": hosts}})
            if f.code == "ssh-host-key-unchecked"]
    assert [f.key for f in hits] == ["vllm-serving:target.hosts[0].sshOpts"]
