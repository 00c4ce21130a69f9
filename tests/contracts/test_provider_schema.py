"""The schema validator rejects what the real provider rejects, so the contract cannot pass vacuously."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.contracts.provider_schema import load_docker_schema

SCHEMA = load_docker_schema()
CONTAINER = "docker:index/container:Container"
PROVIDER = "pulumi:providers:docker"
GOOD_CONTAINER: dict[str, Any] = {
    "image": "sha256:" + "cd" * 32,
    "shmSize": 32768,
    "healthcheck": {"tests": ["CMD", "true"], "startPeriod": "10m0s", "retries": 3},
    "ports": [{"internal": 8000, "external": 8000, "ip": "0.0.0.0", "protocol": "tcp"}],
    "logOpts": {"max-size": "100m"},
    "deviceRequests": [{"driver": "nvidia", "deviceIds": ["6", "7"], "capabilities": ["gpu"]}],
    "deviceCgroupRules": ["c 195:* rmw"],  # in the 5.2.0 overlay, not in the 5.1.0 schema
}


def _container(**changes: Any) -> dict[str, Any]:
    return {**GOOD_CONTAINER, **changes}


def test_accepts_a_well_formed_container() -> None:
    assert SCHEMA.validate(CONTAINER, GOOD_CONTAINER) == []


# (resource, inputs, the exact problems reported)
BAD_INPUTS: dict[str, tuple[str, dict[str, Any], list[str]]] = {
    "misspelt property": (CONTAINER, _container(shmSise=1), [
        "Container.shmSise: Container has no input 'shmSise' (did you mean shmSize?)"]),
    "snake_case name": (CONTAINER, _container(destroy_grace_seconds=60), [
        "Container.destroy_grace_seconds: Container has no input 'destroy_grace_seconds' "
        "(did you mean destroyGraceSeconds?)"]),
    "string for an integer": (CONTAINER, _container(shmSize="32g"), [
        "Container.shmSize: expected integer, got str \"32g\""]),
    "fraction for an integer": (CONTAINER, _container(waitTimeout=1.5), [
        "Container.waitTimeout: expected integer, got float 1.5"]),
    "boolean for an integer": (CONTAINER, _container(stopTimeout=True), [
        "Container.stopTimeout: expected integer, got bool true"]),
    "missing required input": ("docker:index/remoteImage:RemoteImage", {"keepLocally": True}, [
        "RemoteImage.name: required input of RemoteImage is missing"]),
    "nested wrong type": (CONTAINER, _container(healthcheck={"startPeriod": 600}), [
        "Container.healthcheck.startPeriod: expected string, got int 600"]),
    "nested unknown name": (CONTAINER, _container(healthcheck={"start_period": "10s"}), [
        "Container.healthcheck.start_period: ContainerHealthcheck has no input 'start_period' "
        "(did you mean startPeriod?)"]),
    "required inside an array item": (CONTAINER, _container(ports=[{"external": 8000}]), [
        "Container.ports[0].internal: required input of ContainerPort is missing"]),
    "string for a list": (CONTAINER, _container(deviceRequests=[{"deviceIds": "6,7"}]), [
        "Container.deviceRequests[0].deviceIds: expected array, got str \"6,7\""]),
    "map value type": (CONTAINER, _container(logOpts={"max-file": 3}), [
        "Container.logOpts['max-file']: expected string, got int 3"]),
    "object for a nested type": (CONTAINER, _container(healthcheck=["CMD", "true"]), [
        "Container.healthcheck: expected object ContainerHealthcheck, got list [\"CMD\", \"true\"]"]),
    "value outside an enum": ("docker:index/image:Image",
                              {"imageName": "x", "build": {"builderVersion": "BuilderV3"}}, [
        "Image.build.builderVersion: 'BuilderV3' is not one of ['BuilderV1', 'BuilderBuildKit']"]),
    "provider config unknown name": (PROVIDER, {"sshOptions": json.dumps(["-i", "key"])}, [
        "Provider.sshOptions: Provider has no input 'sshOptions' (did you mean sshOpts?)"]),
    "provider registry auth without address": (
        PROVIDER, {"registryAuth": json.dumps([{"username": "u", "password": "p"}])}, [
            "Provider.registryAuth[0].address: required input of ProviderRegistryAuth is missing"]),
    "provider config not JSON": (PROVIDER, {"sshOpts": "-i key"}, [
        "Provider.sshOpts: provider config must be JSON text here, got str \"-i key\""]),
}


@pytest.mark.parametrize(("token", "inputs", "problems"), list(BAD_INPUTS.values()), ids=list(BAD_INPUTS))
def test_reports_each_problem_with_its_path(token: str, inputs: dict[str, Any], problems: list[str]) -> None:
    assert SCHEMA.validate(token, inputs) == problems


def test_every_problem_is_reported_not_just_the_first() -> None:
    found = SCHEMA.validate(CONTAINER, {"shmSize": "1g", "gpuz": "all", "ports": [{}]})
    assert [p.split(":")[0] for p in found] == [
        "Container.shmSize", "Container.gpuz", "Container.ports[0].internal", "Container.image"]


def test_integers_arrive_as_whole_floats_and_pass() -> None:
    # every number crosses Pulumi's wire as a double; the provider reads 8000.0 as 8000
    assert SCHEMA.validate(CONTAINER, _container(shmSize=32768.0, ports=[{"internal": 8000.0}])) == []


def test_provider_config_is_json_text_and_is_checked_decoded() -> None:
    auth = [{"address": "harbor.local:30000", "username": "robot", "password": "p"}]
    good = {"host": "ssh://deploy@gpu", "registryAuth": json.dumps(auth), "sshOpts": json.dumps(["-i", "k"])}
    assert SCHEMA.validate(PROVIDER, good) == []


def test_unknown_resource_type_is_an_error_not_a_pass() -> None:
    with pytest.raises(KeyError, match="docker:index/contaner:Contaner"):
        SCHEMA.validate("docker:index/contaner:Contaner", {})
