"""Every Docker resource the program registers is one pulumi-docker's schema accepts.

Mocks accept any input; the real provider refuses an unknown name, a wrong type or a missing
required input at `pulumi preview`, after the operator has set up the host. This runs each shipped
Docker stack (and variants of it) through the program and checks every `docker:*` resource and
the Docker provider against the published schema (tests/contracts/schemas/).
"""

from __future__ import annotations

import pytest

from tests.contracts.provider_schema import PROVIDER_PREFIX, load_docker_schema
from tests.contracts.variants import Case, Variant, cases, shipped_stacks
from tests.paths import SHIPPED_STACK_FILES
from tests.pulumi_harness import as_manifest

SCHEMA = load_docker_schema()
PROVIDER = f"{PROVIDER_PREFIX}docker"

VARIANTS = (
    Variant("as-shipped"),
    Variant("all-secrets", secrets=("apiKey", "registryPassword", "hfToken")),
    # the provider's registryAuth, with a username the stack file does not have
    Variant("registry-auth", {"image": {"username": "robot"}}, ("registryPassword",)),
    Variant("device-ids", {"hardware": {"deviceIds": [2, 3, 4, 5]}, "engine": {"tensorParallelSize": 4}}),
    Variant("named-weights-volume", {"model": {"hostPath": None, "volumeName": "qwen-weights", "protect": True}}),
    Variant("cache-volume", {"cache": {"hostPath": None, "volumeName": "vllm-compile-cache"}}),
    Variant("cache-host-path", {"cache": {"volumeName": None, "hostPath": "/srv/vllm-cache"}}),
    # the provider's host and sshOpts (mocks never connect)
    Variant("ssh-host", {"target": {"dockerHost": "ssh://deploy@gpu.invalid",
                                    "sshOpts": ["-o", "StrictHostKeyChecking=yes"]}}),
    # a Docker fleet: a provider and a deployment per host (each host its own URL, so a stack
    # that binds to loopback stays valid)
    Variant("fleet", {"target": {"dockerHost": None, "hosts": [
        {"dockerHost": "ssh://deploy@gpu-a.invalid", "publicHost": "gpu-a.invalid"},
        {"dockerHost": "ssh://deploy@gpu-b.invalid", "publicHost": "gpu-b.invalid",
         "sshOpts": ["-o", "StrictHostKeyChecking=yes"]}]}}),
)
DOCKER_CASES = cases("docker", VARIANTS)


def test_every_stack_file_is_checked() -> None:
    files = {p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in SHIPPED_STACK_FILES}
    assert set(shipped_stacks("docker")) | set(shipped_stacks("kubernetes")) == files
    as_shipped = {p.values[0].stack for p in DOCKER_CASES if p.values[0].variant.name == "as-shipped"}
    assert as_shipped == set(shipped_stacks("docker")) != set()


@pytest.mark.parametrize("case", DOCKER_CASES)
def test_docker_resources_match_the_provider_schema(case: Case) -> None:
    registered = [r for r in case.registrations() if r.type.startswith("docker:") or r.type == PROVIDER]
    checked = {r.type for r in registered}
    # the provider, the image and the container always; volumes only for named volumes
    assert {PROVIDER, "docker:index/remoteImage:RemoteImage", "docker:index/container:Container"} <= checked
    problems = [f"{r.name}: {p}" for r in registered for p in SCHEMA.validate(r.type, as_manifest(r.inputs))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", DOCKER_CASES)
def test_docker_resources_use_the_configured_provider(case: Case) -> None:
    # Pulumi's default provider would talk to the Docker daemon where `pulumi` runs, without the
    # stack's host and registry credentials; mocks accept either.
    # A fleet has one provider per host: each resource uses its own deployment's
    # (`<deployment>-docker` for `<deployment>-image`, `-server`...).
    registered = case.registrations()
    providers = {r.name for r in registered if r.type == PROVIDER}
    assert providers
    for r in registered:
        if r.type.startswith("docker:"):
            used = r.provider.split("::")[-2] if f"{PROVIDER}::" in r.provider else None
            assert used in providers, f"{r.type} {r.name} uses {r.provider or 'the default provider'}"
            assert r.name.startswith(used.removesuffix("-docker") + "-"), f"{r.name} uses {used}"


def test_variants_reach_the_optional_inputs() -> None:
    """The variants are there to exercise inputs the shipped files leave unset."""
    seen: set[str] = set()
    for param in DOCKER_CASES:
        for r in param.values[0].registrations():
            if r.type.startswith("docker:") or r.type == PROVIDER:
                seen |= {f"{r.type.rsplit(':', 1)[-1]}.{k}" for k in r.inputs}
    assert {"docker.registryAuth", "docker.host", "docker.sshOpts", "Volume.name",
            "Container.volumes", "Container.envs"} <= seen
