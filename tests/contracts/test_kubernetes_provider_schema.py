"""The Kubernetes provider the program registers (the one that adopts what `destroy` kept) is one
pulumi-kubernetes' schema accepts, and it is configured as the stack's default provider is.

Mocks accept any provider input; the real engine hands the provider its inputs at `pulumi preview`,
and the provider refuses an unknown one. A provider that read a different kubeconfig context than
the default provider would apply the kept namespace and claims to another cluster.
"""

from __future__ import annotations

import inspect
import json
import re

import pulumi_kubernetes as k8s
import pytest

from components.kubernetes.adopting_provider import NOT_PASSED_THROUGH, PASSED_THROUGH
from tests.conftest import RunProgram, shipped_stack
from tests.contracts.provider_schema import PROVIDER_PREFIX, load_kubernetes_provider_schema
from tests.contracts.test_kubernetes_objects import KUBERNETES_CASES
from tests.contracts.variants import Case
from tests.pulumi_harness import as_manifest, plain_text, secret_paths

SCHEMA = load_kubernetes_provider_schema()
PROVIDER = f"{PROVIDER_PREFIX}kubernetes"
API_KEY = "SENTINEL-provider-contract-key-0001"
KUBECONFIG = "apiVersion: v1\nkind: Config\nusers: [{name: ops, user: {token: SENTINEL-kube-token}}]\n"


def _camel(snake: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), snake)


def test_installed_sdk_sends_the_inputs_the_schema_describes() -> None:
    _self, *names = inspect.signature(k8s.ProviderArgs.__init__).parameters
    assert {_camel(n) for n in names} == set(SCHEMA.resource(PROVIDER).properties)


def test_the_validator_refuses_what_the_provider_refuses() -> None:
    assert SCHEMA.validate(PROVIDER, {"upsertExistingObjects": "true"}) == []
    assert SCHEMA.validate(PROVIDER, {"upsertExistingObjects": "yes"}) == [
        'Provider.upsertExistingObjects: provider config must be JSON text here, got str "yes"']
    assert SCHEMA.validate(PROVIDER, {"upsertExisting": "true"}) == [
        "Provider.upsertExisting: Provider has no input 'upsertExisting' (did you mean upsertExistingObjects?)"]


@pytest.mark.parametrize("case", KUBERNETES_CASES)
def test_kubernetes_providers_match_the_provider_schema(case: Case) -> None:
    providers = [r for r in case.registrations() if r.type == PROVIDER]
    problems = [f"{r.name}: {p}" for r in providers for p in SCHEMA.validate(r.type, as_manifest(r.inputs))]
    assert not problems, "\n".join(problems)


def test_every_provider_setting_a_stack_can_set_reaches_the_adopting_provider() -> None:
    # a setting the default provider reads from `kubernetes:` config but this one lacks would make
    # the kept namespace and claims go through a differently configured client
    assert set(PASSED_THROUGH) | set(NOT_PASSED_THROUGH) == set(SCHEMA.resource(PROVIDER).properties)
    # left out: only the adopting provider's own upsert and Helm's release settings (no release here)
    assert sorted(NOT_PASSED_THROUGH) == ["helmReleaseSettings", "upsertExistingObjects"]
    assert not set(PASSED_THROUGH) & set(NOT_PASSED_THROUGH)
    assert {_camel(argument) for argument, _ in PASSED_THROUGH.values()} == set(PASSED_THROUGH)


def test_the_adopting_provider_reads_the_cluster_the_stack_names(program: RunProgram) -> None:
    config = {**shipped_stack("a100-k8s"), "kubernetes:context": "gpu-prod", "kubernetes:cluster": "prod",
              "kubernetes:enableServerSideApply": "true",
              "kubernetes:kubeClientSettings": {"timeout": 120, "qps": 20}}
    run = program(config, stack="a100-k8s", secrets={"apiKey": API_KEY, "kubernetes:kubeconfig": KUBECONFIG})
    (provider,) = [r for r in run.resources if r.type == PROVIDER]
    assert SCHEMA.validate(PROVIDER, as_manifest(provider.inputs)) == []
    inputs = as_manifest(provider.inputs)
    assert {key: inputs[key] for key in ("context", "cluster", "enableServerSideApply", "upsertExistingObjects")} == {
        "context": "gpu-prod", "cluster": "prod", "enableServerSideApply": "true", "upsertExistingObjects": "true"}
    assert inputs["kubeconfig"] == KUBECONFIG
    assert json.loads(inputs["kubeClientSettings"]) == {"timeout": 120, "qps": 20}
    # the kubeconfig (a token inside) stays a secret on the wire
    assert "SENTINEL-kube-token" not in plain_text(provider.raw)
    assert ".kubeconfig" in set(secret_paths(provider.raw))
