"""The options that carry a deployment through day 2, on every shipped stack and variant.

The scenario tests (tests/docker/test_day2_*.py, tests/kubernetes/test_day2_*.py) drive one stack
through the sequences; these check that every registration of every stack carries the option the
real engine and providers act on (docs/provider-behaviour.md, "Day 2").
"""

from __future__ import annotations

import pytest

from tests.contracts.test_docker_schema import DOCKER_CASES
from tests.contracts.test_kubernetes_objects import KUBERNETES_CASES
from tests.contracts.variants import Case
from tests.pulumi_harness import Registered, as_manifest

CONTAINER = "docker:index/container:Container"
VOLUME = "docker:index/volume:Volume"
K8S_PROVIDER = "pulumi:providers:kubernetes"


def _servers(case: Case) -> list[Registered]:
    return [r for r in case.registrations() if r.type == CONTAINER and not r.inputs.get("attach")]


@pytest.mark.parametrize("case", DOCKER_CASES)
def test_a_server_that_failed_its_health_wait_is_replaced_by_the_next_up(case: Case) -> None:
    servers = _servers(case)
    assert servers and all(s.inputs["wait"] for s in servers)
    assert all("#initerror" in s.replace_on_changes for s in servers)


@pytest.mark.parametrize("case", DOCKER_CASES)
def test_a_server_a_refresh_found_stopped_is_replaced_not_merely_started(case: Case) -> None:
    # the provider's update starts a container whose must_run went back to true, without a health wait
    assert all("mustRun" in s.replace_on_changes and s.inputs["mustRun"] for s in _servers(case))


@pytest.mark.parametrize("case", DOCKER_CASES)
def test_log_options_are_ignored_whole_and_the_stacks_own_force_a_replacement_through_a_label(case: Case) -> None:
    # an ignored map key would leave the map's count diff (ForceNew), a replacement beside any other change
    for server in _servers(case):
        assert server.inputs["logDriver"] == "json-file"
        assert list(server.ignore_changes) == ["logOpts"], server.name  # nothing else ignored
        own = server.inputs["logOpts"]
        assert {"max-size", "max-file"} <= set(own)
        labels = {item["label"]: item["value"] for item in server.inputs["labels"]}
        assert labels["vllm-serving.log-opts"] == ",".join(f"{k}={v}" for k, v in sorted(own.items()))


def test_every_named_volume_is_kept_and_adopted_as_it_is() -> None:
    volumes = [r for param in DOCKER_CASES for r in param.values[0].registrations() if r.type == VOLUME]
    assert volumes  # the named-volume variants register some
    for volume in volumes:
        assert volume.retain_on_delete
        assert {"labels", "driverOpts"} <= set(volume.ignore_changes)
        assert not volume.inputs.get("labels") and not volume.inputs.get("driverOpts")  # the stack sets neither


@pytest.mark.parametrize("case", KUBERNETES_CASES)
def test_what_destroy_keeps_is_created_through_an_upserting_provider(case: Case) -> None:
    registered = case.registrations()
    providers = {r.name: as_manifest(r.inputs) for r in registered if r.type == K8S_PROVIDER}
    objects = [r for r in registered if r.type.startswith("kubernetes:") and r.custom]
    kept = [r for r in objects if r.retain_on_delete]
    assert {r.inputs["kind"] for r in kept} <= {"Namespace", "PersistentVolumeClaim"}
    for r in objects:
        provider = r.provider.split("::")[-2] if r.provider else None
        if r.retain_on_delete:
            assert provider in providers and providers[provider]["upsertExistingObjects"] == "true", r.name
        else:  # an upsert's create then delete of a renamed resource would remove the object
            assert provider is None, r.name


@pytest.mark.parametrize("case", KUBERNETES_CASES)
def test_kubectl_edits_lose_to_the_stack_and_claims_are_left_to_the_workload(case: Case) -> None:
    for r in case.registrations():
        if not (r.type.startswith("kubernetes:") and r.custom) or r.type.endswith("CustomResourceDefinition"):
            continue
        annotations = r.inputs["metadata"].get("annotations") or {}
        assert annotations.get("pulumi.com/patchForce") == "true", r.name
        if r.inputs["kind"] == "PersistentVolumeClaim":
            assert annotations.get("pulumi.com/skipAwait") == "true", r.name
