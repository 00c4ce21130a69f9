"""`VllmKubernetes` under Pulumi's mocks: what the engine would be asked to create."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import kubernetes_validate
import pulumi
import pytest

from tests.conftest import RunProgram, shipped_stack
from tests.kubernetes.cluster_version import KUBERNETES_VERSION
from tests.pulumi_harness import Registered, as_manifest, plain_text, recording_mocks
from tests.stack_builders import make_spec
from vllm_serving.render.kubernetes.objects import kubernetes_objects
from vllm_serving.render.kubernetes.parts import SECRETS_CHECKSUM
from vllm_serving.spec import ServingSpec

SENTINEL = "SENTINEL-apikey-123"
SECRETS = {"apiKey": SENTINEL, "registryPassword": "SENTINEL-registry-456", "hfToken": "SENTINEL-hf-789"}


@pytest.fixture
def monitor() -> Iterator[Any]:
    """Mocks for one test (they are process-global, so never at module level)."""
    yield recording_mocks("a100-k8s")


def _spec() -> ServingSpec:
    return make_spec(secrets=("apiKey", "registryPassword", "hfToken"),
                     image={"username": "robot", "registry": "harbor.local:30000"},
                     model={"protect": True},
                     kubernetes={"weights": {"claim": {"size": "64g", "storageClassName": "fast"}}})


def _build(spec: ServingSpec) -> Any:
    from components.kubernetes.vllm_kubernetes import VllmKubernetes

    secrets = {k: pulumi.Output.secret(v) for k, v in SECRETS.items()}
    component = VllmKubernetes("vllm", spec, secrets)
    children = [component.namespace_resource, component.registry_secret, component.credentials_secret,
                component.weights_claim, component.cache_claim, component.deployment, component.service,
                component.network_policy, component.disruption_budget]
    urns = [c.urn for c in children if c is not None]
    # resolve once every child is registered, not just those the outputs depend on
    return pulumi.Output.all(pulumi.Output.all(*urns), pulumi.Output.all(**component.outputs)).apply(
        lambda both: both[1])


def _one(mon: Any, suffix: str, name: str | None = None) -> Registered:
    found = [c for c in mon.registered if c.type.endswith(suffix) and name in (None, c.name)]
    assert len(found) == 1, [c.name for c in found]
    return found[0]


def _inputs(mon: Any, suffix: str, name: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = as_manifest(_one(mon, suffix, name).inputs)
    return result


def _pod(mon: Any) -> dict[str, Any]:
    return _inputs(mon, "apps/v1:Deployment")["spec"]["template"]["spec"]


@pulumi.runtime.test
def test_deployment_gpus_probes_shm_and_weights(monitor: Any) -> Any:
    spec = _spec()

    def check(outputs: dict[str, Any]) -> None:
        pod = _pod(monitor)
        container = pod["containers"][0]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == "4"
        assert container["args"] == list(spec.args) == outputs["vllmArgs"]
        startup = container["startupProbe"]
        assert startup["failureThreshold"] * startup["periodSeconds"] >= spec.startup_seconds
        shm = next(v for v in pod["volumes"] if v["name"] == "dshm")
        assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "32Gi"}
        weights = next(m for m in container["volumeMounts"] if m["name"] == "weights")
        assert weights["readOnly"] is True
        assert pod["imagePullSecrets"] == [{"name": "vllm-registry"}]
        registry = _inputs(monitor, "core/v1:Secret", "vllm-registry")
        assert registry["type"] == "kubernetes.io/dockerconfigjson"
        assert outputs["baseUrl"] == "http://vllm.vllm.svc.cluster.local:8000/v1"
        assert outputs["serviceName"] == "vllm" and outputs["namespace"] == "vllm"

    return _build(spec).apply(check)


@pulumi.runtime.test
def test_timeouts_and_retained_claim(monitor: Any) -> Any:
    spec = _spec()

    def check(_: Any) -> None:
        deployment = _one(monitor, "apps/v1:Deployment")
        # By hand: Qwen3.6-27B-FP8 (~28.3 GiB) loads in 300 s + 15 s/GiB x 28.3 GiB = 725 s -> 780 s;
        # the rollout adds 900 s for scheduling and the image pull (1680 s), Pulumi 300 s more so
        # Kubernetes' ProgressDeadlineExceeded comes first: 1980 s = 33 min (one replica: one step).
        assert deployment.custom_timeouts["create"] == deployment.custom_timeouts["update"] == "33m"
        weights = _one(monitor, "PersistentVolumeClaim", "vllm-weights")
        assert weights.retain_on_delete and weights.protect
        cache = _one(monitor, "PersistentVolumeClaim", "vllm-cache")
        assert not cache.protect
        # a destroyed namespace would take the claim with it
        assert _one(monitor, "core/v1:Namespace").retain_on_delete

    return _build(spec).apply(check)


@pulumi.runtime.test
def test_secret_values_only_inside_secrets(monitor: Any) -> Any:
    def check(_: Any) -> None:
        env = _pod(monitor)["containers"][0]["env"]
        assert all("value" not in e for e in env)
        assert {e["valueFrom"]["secretKeyRef"]["key"] for e in env} == {"VLLM_API_KEY", "HF_TOKEN"}
        for c in monitor.registered:
            text = plain_text(c.raw)
            assert "SENTINEL" not in text, f"{c.type} {c.name} carries a secret in plain text"
            if not c.type.endswith("core/v1:Secret"):
                assert "SENTINEL" not in json.dumps(as_manifest(c.inputs), default=str), c.name
        creds = _inputs(monitor, "core/v1:Secret", "vllm-credentials")
        assert creds["stringData"] == {"VLLM_API_KEY": SENTINEL, "HF_TOKEN": SECRETS["hfToken"]}
        registry = _inputs(monitor, "core/v1:Secret", "vllm-registry")["stringData"]
        assert json.loads(registry[".dockerconfigjson"])["auths"]["harbor.local:30000"]["password"] \
            == SECRETS["registryPassword"]

    return _build(_spec()).apply(check)


def test_real_program_a100_k8s(program: RunProgram) -> None:
    """The shipped stack through __main__.py: the captured objects are the rendered ones."""
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={"apiKey": SENTINEL})
    captured = [as_manifest(r.inputs) for r in run.resources if r.type.startswith("kubernetes:")]
    spec = make_spec(secrets=("apiKey",))
    rendered = kubernetes_objects(spec, {"apiKey": SENTINEL})
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
    assert sorted(captured, key=key) == sorted(rendered, key=key)
    for obj in captured:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
    deployment = run.one("apps/v1:Deployment")
    assert deployment.custom_timeouts["create"] == deployment.custom_timeouts["update"]
    assert run.outputs["healthUrl"] == "http://vllm.vllm.svc.cluster.local:8000/health"
    assert SENTINEL not in json.dumps(run.outputs)


def _pod_annotations(program: RunProgram, api_key: str) -> dict[str, str]:
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={"apiKey": api_key})
    template = run.one("apps/v1:Deployment").inputs["spec"]["template"]
    return dict(template["metadata"]["annotations"])


def test_a_new_api_key_rolls_the_pods(program: RunProgram) -> None:
    # a Secret's new value does not reach pods that read it through secretKeyRef; a changed
    # pod-template annotation rolls them
    first, second = _pod_annotations(program, SENTINEL), _pod_annotations(program, SENTINEL + "-rotated")
    assert first[SECRETS_CHECKSUM] != second[SECRETS_CHECKSUM]
    assert first == _pod_annotations(program, SENTINEL)  # same key, no rollout
    assert SENTINEL not in json.dumps(first)


def test_namespace_survives_destroy(program: RunProgram) -> None:
    # deleting a Namespace deletes every claim in it, retain_on_delete on the claims notwithstanding
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={"apiKey": SENTINEL})
    assert run.one("core/v1:Namespace").retain_on_delete


def test_service_does_not_wait_for_the_model_load(program: RunProgram) -> None:
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={"apiKey": SENTINEL})
    service = run.one("core/v1:Service").inputs
    assert service["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"


def test_every_object_in_the_namespace_is_created_after_it(program: RunProgram) -> None:
    # the API server refuses an object in a namespace that does not exist yet ("namespaces ... not
    # found"): on a fresh cluster each one must wait for the Namespace the stack creates
    config = shipped_stack("a100-k8s")
    config["vllm-serving:image"] = {**config["vllm-serving:image"], "username": "robot"}
    secrets = {"apiKey": SENTINEL, "registryPassword": SECRETS["registryPassword"]}
    run = program(config, stack="a100-k8s", secrets=secrets)
    namespace = run.one("core/v1:Namespace")
    name = namespace.inputs["metadata"]["name"]
    inside = [r for r in run.resources if r.custom and r.type.startswith("kubernetes:")
              and (r.inputs.get("metadata") or {}).get("namespace") == name]
    assert {r.type.rsplit(":", 1)[1] for r in inside} >= {"Secret", "Deployment", "Service", "PersistentVolumeClaim"}
    assert len([r for r in inside if r.type.endswith(":Secret")]) == 2, "the pull secret and the credentials"
    for r in inside:
        assert any(u.endswith(f"::{namespace.name}") for u in r.dependencies), f"{r.type} {r.name} before its namespace"


def test_every_object_is_a_child_of_the_component(program: RunProgram) -> None:
    # a resource's URN carries its parent's type: an object registered outside the component would
    # get another URN than the one in a stack's state, and `pulumi up` would replace it (a
    # NetworkPolicy gone for the moment between delete and create)
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={"apiKey": SENTINEL})
    (component,) = [r for r in run.resources if r.type == "vllm-serving:kubernetes:VllmKubernetes"]
    objects = [r for r in run.resources if r.custom and r.type.startswith("kubernetes:")]
    assert {r.type.rsplit(":", 1)[1] for r in objects} >= {"Deployment", "Service", "NetworkPolicy"}
    assert [r.name for r in objects if not r.parent.endswith(f"VllmKubernetes::{component.name}")] == []


@pytest.mark.parametrize("protect", [True, False])
def test_model_protect_protects_the_namespace_that_holds_the_claims(program: RunProgram, protect: bool) -> None:
    # deleting the Namespace deletes the weights claim in it: model.protect guards both, so a
    # `pulumi destroy` stops at the namespace as it does at the claim
    config = shipped_stack("a100-k8s")
    config["vllm-serving:model"] = {**config["vllm-serving:model"], "protect": protect}
    run = program(config, stack="a100-k8s", secrets={"apiKey": SENTINEL})
    assert run.one("core/v1:Namespace").protect is protect


def test_a_registry_password_without_a_user_builds_no_pull_secret(program: RunProgram) -> None:
    # image.username is what asks for a pull secret (an empty one is refused at config); the
    # password alone leaves the pull anonymous, as on Docker
    config = shipped_stack("a100-k8s")
    config["vllm-serving:image"] = {**config["vllm-serving:image"], "registry": "harbor.local"}
    run = program(config, stack="a100-k8s", secrets={"apiKey": SENTINEL, "registryPassword": "pw-1"})
    assert [r.name for r in run.resources if r.type == "kubernetes:core/v1:Secret"] == ["vllm-credentials"]
    assert "imagePullSecrets" not in run.one("apps/v1:Deployment").inputs["spec"]["template"]["spec"]
