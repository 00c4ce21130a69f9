"""A Docker fleet expanded into one server per host (vllm_serving/fleet.py): each host's spec is the
stack's, with only where it runs replaced, and its keys and resource names as an operator reads
them. Expected values are written out from tests/fixtures/fleet/Pulumi.fleet.yaml."""

from __future__ import annotations

from tests.fleet.fleet_stacks import fleet_spec
from tests.stack_builders import make_spec
from vllm_serving.fleet import (
    DOCKER_DEFAULT_HOST,
    HOST_KEYS,
    as_one_host,
    fleet_hosts,
    host_resource_name,
    is_fleet,
)


def test_each_host_runs_the_stacks_server_where_the_host_says() -> None:
    spec = fleet_spec()
    first, second, third = fleet_hosts(spec)
    assert [h.index for h in (first, second, third)] == [0, 1, 2]
    assert [h.id for h in (first, second, third)] == ["gpu01", "gpu02", "gpu03"]
    assert [h.spec.settings.target.docker_host for h in (first, second, third)] == [
        "ssh://deploy@gpu01.example.internal", "ssh://deploy@gpu02.example.internal", "ssh://deploy@10.0.0.13"]
    # hardware.deviceIds and target.sshOpts are the defaults of the hosts that give none
    assert [h.spec.settings.hardware.device_ids for h in (first, second, third)] == [
        (0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 2, 3)]
    assert all(h.spec.settings.target.ssh_opts == ("-o", "StrictHostKeyChecking=yes") for h in (first, second, third))
    # gpu03's URLs use its publicHost, the others their ssh host's name
    assert [h.spec.endpoints()["baseUrl"] for h in (first, second, third)] == [
        "http://gpu01.example.internal:8000/v1", "http://gpu02.example.internal:8000/v1",
        "http://gpu03.example.internal:8000/v1"]
    for host in (first, second, third):
        assert host.spec.settings.target.hosts == ()  # one server: rules and backends take it as any stack
        assert (host.spec.args, host.spec.env, host.spec.startup_seconds, host.spec.stack) == (
            spec.args, spec.env, spec.startup_seconds, spec.stack)  # the same server on every host
        assert host.spec.settings.engine == spec.settings.engine and host.spec.settings.model == spec.settings.model


def test_a_hosts_own_ssh_options_replace_the_default() -> None:
    spec = fleet_spec(hosts=[{"dockerHost": "ssh://deploy@gpu05.example.internal", "sshOpts": ["-o", "Port=2222"]}])
    (host,) = fleet_hosts(spec)
    assert host.spec.settings.target.ssh_opts == ("-o", "Port=2222")
    assert host.sets("sshOpts") and not host.sets("deviceIds") and not host.sets("publicHost")


def test_what_is_a_fleet() -> None:
    assert is_fleet(fleet_spec())
    assert not is_fleet(make_spec("v100"))  # no target.hosts: one server
    assert not is_fleet(fleet_spec(target={"kind": "kubernetes"}))  # hosts are a Docker notion
    assert fleet_hosts(make_spec("v100")) == ()


def test_host_keys_name_the_entry_and_the_single_host_key_they_replace() -> None:
    assert HOST_KEYS == {
        "dockerHost": "vllm-serving:target.dockerHost", "sshOpts": "vllm-serving:target.sshOpts",
        "deviceIds": "vllm-serving:hardware.deviceIds", "publicHost": "vllm-serving:network.publicHost"}
    third = fleet_hosts(fleet_spec())[2]
    assert third.key("publicHost") == "vllm-serving:target.hosts[2].publicHost"
    assert third.sets("publicHost") and third.sets("name") and not third.sets("deviceIds")


def test_resources_are_named_by_host_id_never_by_position() -> None:
    spec = fleet_spec()
    assert [host_resource_name(spec, h) for h in fleet_hosts(spec)] == [
        "vllm-qwen36-gpu01", "vllm-qwen36-gpu02", "vllm-qwen36-gpu03"]
    without_first = fleet_spec(hosts=[{"dockerHost": "ssh://deploy@gpu02.example.internal"}])
    (only,) = fleet_hosts(without_first)
    assert host_resource_name(without_first, only) == "vllm-qwen36-gpu02"  # unchanged when gpu01 leaves


def test_a_one_server_stack_is_the_first_and_only_host_of_its_fleet() -> None:
    local = as_one_host(make_spec("v100"))
    assert DOCKER_DEFAULT_HOST == "unix:///var/run/docker.sock"  # the Docker provider's own default
    assert (local.index, local.host.docker_host, local.id) == (0, "unix:///var/run/docker.sock", "local")
    remote = as_one_host(make_spec("v100-staging"))
    assert (remote.index, remote.id) == (0, "gpu-v100-stg")  # ssh://deploy@gpu-v100-stg
    assert remote.spec is not None and remote.spec.stack == "v100-staging"
