"""Every Kubernetes object the program registers is valid for the API server and is the one
`vllm-stack render --format k8s` prints for the same stack.

Mocks accept any object; the API server refuses unknown fields and wrong types. Each shipped
Kubernetes stack (and variants of it) runs through the program; the registered objects are
validated against the Kubernetes OpenAPI schema (kubernetes-validate, strict: unknown fields are
errors) and compared with the offline renderer's, so the reviewed preview is what gets applied.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from tests.contracts.variants import Case, Variant, cases, shipped_stacks
from tests.kubernetes.cluster_version import KUBERNETES_VERSION
from tests.pulumi_harness import as_manifest
from tests.stack_builders import make_spec
from vllm_serving.render.kubernetes.objects import kubernetes_objects

VARIANTS = (
    Variant("as-shipped"),
    Variant("all-secrets", secrets=("apiKey", "registryPassword", "hfToken")),
    # a dockerconfigjson pull Secret referenced from the pod
    Variant("registry-auth", {"image": {"username": "robot"}}, ("registryPassword",)),
    Variant("created-weights-claim", {"model": {"protect": True}, "kubernetes": {
        "weights": {"claim": {"size": "64g", "storageClassName": "fast-ssd"}}}}),
    Variant("weights-host-path", {"kubernetes": {"weights": {"hostPath": "/data/models/Qwen3.6-27B-FP8"}}}),
    Variant("existing-namespace", {"kubernetes": {"createNamespace": False}}),
    Variant("no-cache", {"cache": {"enabled": False}}),
    Variant("node-port", {"kubernetes": {"service": {"type": "NodePort", "nodePort": 30080}}}),
)
KUBERNETES_CASES = cases("kubernetes", VARIANTS)


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


def _registered_objects(case: Case) -> list[dict[str, Any]]:
    # Inputs arrive as the manifest's own camelCase fields (Pulumi's Kubernetes SDK adds apiVersion
    # and kind); as_manifest unwraps secrets and turns the wire's whole floats back into integers.
    found = [as_manifest(r.inputs) for r in case.registrations() if r.type.startswith("kubernetes:")]
    return sorted(found, key=_key)


def test_every_kubernetes_stack_is_checked() -> None:
    as_shipped = {p.values[0].stack for p in KUBERNETES_CASES if p.values[0].variant.name == "as-shipped"}
    assert as_shipped == set(shipped_stacks("kubernetes")) != set()


@pytest.mark.parametrize("case", KUBERNETES_CASES)
def test_registered_objects_are_valid_kubernetes(case: Case) -> None:
    objects = _registered_objects(case)
    assert {"Deployment", "Service"} <= {o["kind"] for o in objects}
    problems = []
    for obj in objects:
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(part) for part in exc.path)  # strict stops at the first error
            problems.append(f"{obj['kind']}/{obj['metadata']['name']} {where}: {exc.message}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("case", KUBERNETES_CASES)
def test_registered_objects_are_the_rendered_ones(case: Case) -> None:
    # A promoting stack would need the source's release to render; no Kubernetes stack promotes yet.
    secrets = case.secrets()
    spec = make_spec(case.stack, secrets=tuple(secrets), **case.variant.sections)
    rendered = sorted(kubernetes_objects(spec, secrets), key=_key)
    registered = _registered_objects(case)
    assert [_key(o) for o in registered] == [_key(o) for o in rendered]
    for mine, theirs in zip(registered, rendered, strict=True):
        assert mine == theirs, f"{_key(mine)} differs from the rendered object"
