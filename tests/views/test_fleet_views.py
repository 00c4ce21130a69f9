"""A Docker fleet as `plan`, `render` and `diff` show it, from the fleet test stack
(tests/fixtures/fleet/Pulumi.fleet.yaml): three hosts, gpu01 and gpu02 named after their ssh host's
first label, gpu03 by its `name`; the stack's deviceIds [0, 1, 2, 3] for gpu01 and gpu03, gpu02's
own [4, 5, 6, 7]; URLs on each ssh host's name (gpu03's `publicHost`), port 8000.

The expected values are read off that file by hand, not from the views.
"""

from __future__ import annotations

from functools import cache

import pytest

from tests.fleet.fleet_stacks import fleet_hosts_config, fleet_spec
from tests.stack_builders import make_spec
from vllm_serving.fleet import fleet_hosts
from vllm_serving.render.docker_container import ContainerSpec, container_spec
from vllm_serving.spec import ServingSpec
from vllm_serving.views.fleet import (
    FLEET_TYPE,
    ROLLOUT,
    fleet_plan,
    host_comment,
    host_lines,
    host_view,
    per_host,
    planned_fleet_resources,
    select_hosts,
)
from vllm_serving.views.plan import planned_docker_resources
from vllm_serving.views.stack_diff import Change, stack_diff, stack_view

GPU01 = "ssh://deploy@gpu01.example.internal, GPUs device=0,1,2,3, http://gpu01.example.internal:8000/v1"
GPU02 = "ssh://deploy@gpu02.example.internal, GPUs device=4,5,6,7, http://gpu02.example.internal:8000/v1"
GPU03 = "ssh://deploy@10.0.0.13, GPUs device=0,1,2,3, http://gpu03.example.internal:8000/v1"


@cache
def fleet() -> ServingSpec:
    return fleet_spec()


# --- the stack diff, host by host -----------------------------------------------------------------

def test_each_host_is_one_line_of_the_diff_view() -> None:
    view = stack_view(fleet(), per_host=True)
    assert view["hosts"] == {"gpu01": GPU01, "gpu02": GPU02, "gpu03": GPU03}
    assert view["target"]["where"] == "3 hosts: gpu01, gpu02, gpu03"
    assert view["gpu"]["given"] == "per host"
    assert view["endpoints"] == {}  # each host's URLs are on its own line


def test_a_fleet_compared_with_itself_is_identical() -> None:
    assert stack_diff(fleet(), fleet()) == []


def test_a_host_dropped_from_the_fleet_is_one_removed_line() -> None:
    two = fleet_spec(fleet_hosts_config()[:2])
    assert stack_diff(fleet(), two) == [
        Change("target", "where", "3 hosts: gpu01, gpu02, gpu03", "2 hosts: gpu01, gpu02"),
        Change("hosts", "gpu03", GPU03, None),
    ]
    assert [c.kind for c in stack_diff(two, fleet())] == ["changed", "added"]


def test_a_hosts_gpus_changed_show_on_its_line() -> None:
    hosts = fleet_hosts_config()
    hosts[1]["deviceIds"] = [0, 1, 2, 3]
    changes = stack_diff(fleet(), fleet_spec(hosts))
    assert changes == [
        Change("hosts", "gpu02", GPU02, GPU02.replace("device=4,5,6,7", "device=0,1,2,3")),
        # every host gives the same GPUs again: the plan says which, not "per host"
        Change("gpu", "given", "per host", "device=0,1,2,3"),
    ]


def test_a_single_server_against_a_fleet_is_compared_host_by_host() -> None:
    """Pulumi.a100.yaml runs on the local Docker socket, its GPUs 6-9: one host, `local`."""
    changes = [c for c in stack_diff(make_spec("a100"), fleet()) if c.section in ("target", "hosts")]
    assert [(c.section, c.key, c.a, c.b) for c in changes] == [
        ("target", "sshOpts", "[]", '["-o","StrictHostKeyChecking=yes"]'),
        ("target", "where", "1 host: local", "3 hosts: gpu01, gpu02, gpu03"),
        ("hosts", "gpu01", None, GPU01),
        ("hosts", "gpu02", None, GPU02),
        ("hosts", "gpu03", None, GPU03),
        ("hosts", "local", "local Docker socket, GPUs device=6,7,8,9, http://localhost:8000/v1", None),
    ]


def test_a_single_server_alone_has_no_hosts_section() -> None:
    view = stack_view(make_spec("a100"))
    assert view["hosts"] == {}
    assert view["endpoints"]["baseUrl"] == "http://localhost:8000/v1"


# --- the fleet's plan -----------------------------------------------------------------------------

def test_each_host_in_the_plan_with_its_place_gpus_urls_and_logs_command() -> None:
    hosts = fleet_hosts(fleet())
    plan = fleet_plan(fleet(), hosts, [])
    gpu03 = plan["fleet"]["hosts"][2]
    assert gpu03 == {
        "name": "gpu03", "dockerHost": "ssh://deploy@10.0.0.13", "gpusGiven": "device=0,1,2,3",
        "baseUrl": "http://gpu03.example.internal:8000/v1", "healthUrl": "http://gpu03.example.internal:8000/health",
        "modelsUrl": "http://gpu03.example.internal:8000/v1/models",
        "metricsUrl": "http://gpu03.example.internal:8000/metrics",
        "containerName": "vllm-qwen36", "logsCommand": "docker -H ssh://deploy@10.0.0.13 logs --tail 200 vllm-qwen36"}
    assert plan["fleet"]["endpoints"] == ["http://gpu01.example.internal:8000/v1",
                                          "http://gpu02.example.internal:8000/v1",
                                          "http://gpu03.example.internal:8000/v1"]
    assert plan["fleet"]["rollout"] == ROLLOUT and "one host at a time" in ROLLOUT
    assert plan["target"] == {"kind": "docker", "where": "3 hosts: gpu01, gpu02, gpu03"}
    assert plan["gpu"]["given"] == "per host" and plan["endpoints"] == {}


def test_one_host_reads_in_the_singular_and_gives_its_own_gpus() -> None:
    hosts = fleet_hosts(fleet())[:1]
    plan = fleet_plan(fleet(), hosts, [])
    assert plan["target"]["where"] == "1 host: gpu01"
    assert plan["gpu"]["given"] == "device=0,1,2,3"
    assert plan["scaleOut"]["engines"] == 1


def test_every_host_is_one_more_engine_with_its_own_kv_cache() -> None:
    plan = fleet_plan(fleet(), fleet_hosts(fleet()), [])
    assert plan["scaleOut"]["replicas"] == 3 and plan["scaleOut"]["engines"] == 3
    assert plan["scaleOut"]["kvCacheTokensTotal"] == 3 * plan["scaleOut"]["kvCacheTokensPerEngine"]


def test_the_fleet_registers_one_deployment_per_host_named_by_its_id() -> None:
    spec = fleet()
    hosts = fleet_hosts(spec)
    resources = planned_fleet_resources(spec, hosts)
    assert resources[0] == ("vllm-serving:docker:VllmFleet", "vllm-qwen36") == (FLEET_TYPE, spec.name)
    assert resources[1:] == [r for host in ("gpu01", "gpu02", "gpu03")
                             for r in planned_docker_resources(hosts[0].spec, f"vllm-qwen36-{host}")]
    plan = fleet_plan(spec, hosts, [])
    assert [(r["type"], r["name"]) for r in plan["resources"]] == resources


def test_the_docker_run_command_of_each_host_under_its_comment() -> None:
    plan = fleet_plan(fleet(), fleet_hosts(fleet()), [])
    parts = plan["dockerRunCommand"].split("\n\n")
    assert [p.splitlines()[0] for p in parts] == [
        "# host gpu01 (ssh://deploy@gpu01.example.internal)",
        "# host gpu02 (ssh://deploy@gpu02.example.internal)",
        "# host gpu03 (ssh://deploy@10.0.0.13)"]
    assert [p.splitlines()[1] for p in parts] == ["docker run -d \\"] * 3
    assert "--gpus '\"device=4,5,6,7\"'" in parts[1] and "--gpus '\"device=0,1,2,3\"'" in parts[2]
    assert not plan["dockerRunCommand"].endswith("\n")


def test_hosts_with_the_same_container_share_one_render() -> None:
    hosts = fleet_hosts(fleet())
    rendered: list[ContainerSpec] = []

    def render(c: ContainerSpec) -> str:
        rendered.append(c)
        return f"run {c.gpus}\n"

    text = per_host(hosts, render, "---\n")
    # gpu01 and gpu03 give the same GPUs to the same container: rendered once
    assert len(rendered) == 2
    assert text == ("# host gpu01 (ssh://deploy@gpu01.example.internal)\nrun device=0,1,2,3\n---\n"
                    "# host gpu02 (ssh://deploy@gpu02.example.internal)\nrun device=4,5,6,7\n---\n"
                    "# host gpu03 (ssh://deploy@10.0.0.13)\nrun device=0,1,2,3\n")


def test_the_host_comment_names_the_host_and_its_docker_endpoint() -> None:
    assert host_comment(fleet_hosts(fleet())[1]) == "# host gpu02 (ssh://deploy@gpu02.example.internal)"


def test_the_plan_text_lists_each_host_on_one_row() -> None:
    plan = fleet_plan(fleet(), fleet_hosts(fleet()), [])
    assert host_lines(plan) == [
        "gpu01          ssh://deploy@gpu01.example.internal  GPUs device=0,1,2,3  http://gpu01.example.internal:8000/v1",
        "gpu02          ssh://deploy@gpu02.example.internal  GPUs device=4,5,6,7  http://gpu02.example.internal:8000/v1",
        "gpu03          ssh://deploy@10.0.0.13  GPUs device=0,1,2,3  http://gpu03.example.internal:8000/v1"]
    cpu = {"fleet": {"hosts": [{"name": "cpu01", "dockerHost": "ssh://me@cpu01", "gpusGiven": None,
                                "baseUrl": "http://cpu01:8000/v1"}]}}
    assert host_lines(cpu) == ["cpu01          ssh://me@cpu01  GPUs none (CPU)  http://cpu01:8000/v1"]


def test_a_host_view_is_what_the_stack_outputs_show() -> None:
    host = fleet_hosts(fleet())[0]
    view = host_view(host, container_spec(host.spec))
    assert view == {
        "name": "gpu01", "dockerHost": "ssh://deploy@gpu01.example.internal", "gpusGiven": "device=0,1,2,3",
        "baseUrl": "http://gpu01.example.internal:8000/v1", "healthUrl": "http://gpu01.example.internal:8000/health",
        "modelsUrl": "http://gpu01.example.internal:8000/v1/models",
        "metricsUrl": "http://gpu01.example.internal:8000/metrics", "containerName": "vllm-qwen36",
        "logsCommand": "docker -H ssh://deploy@gpu01.example.internal logs --tail 200 vllm-qwen36"}


@pytest.mark.parametrize(("wanted", "ids"), [(None, ["gpu01", "gpu02", "gpu03"]), ("gpu02", ["gpu02"])])
def test_render_takes_every_host_or_the_one_asked_for(wanted: str | None, ids: list[str]) -> None:
    assert [h.id for h in select_hosts(fleet_hosts(fleet()), wanted)] == ids


def test_an_unknown_host_is_refused_with_the_hosts_there_are() -> None:
    with pytest.raises(ValueError, match="^no host 'gpu09' in target.hosts; the hosts are gpu01, gpu02, gpu03$"):
        select_hosts(fleet_hosts(fleet()), "gpu09")
