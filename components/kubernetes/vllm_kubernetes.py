"""`VllmKubernetes`: the vLLM server on a Kubernetes cluster, from the same spec as the Docker host.

The objects are those `vllm-stack render --format k8s` prints (`vllm_serving.render.kubernetes`);
this component only adds what a plain manifest cannot say: secret values as Pulumi secrets,
`retain_on_delete`/`protect` on a weights claim the stack creates, and `custom_timeouts` on the
Deployment long enough for the model load, once per replica an update rolls in turn (Pulumi's await
gives up after 10 minutes by default; docs/provider-behaviour.md).
A server across nodes is a LeaderWorkerSet (a custom resource): its CRD is read from the cluster
first, so a cluster without LeaderWorkerSet, or with one before v0.9.0 (its status records no
generation, so Pulumi's wait would end on a stale condition), fails the preview before anything is
created. The Namespace and the claims, which `destroy` keeps, go through a provider that adopts
them at the next `up` (adopting_provider.py).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kubernetes.adopting_provider import adopting_provider
from components.kubernetes.monitoring import monitoring_resources, operator_crds
from vllm_serving.findings import ConfigError
from vllm_serving.planner.capacity import plan_capacity
from vllm_serving.planner.scale_out import scale_out, scale_out_view
from vllm_serving.render.kubernetes.leader_worker_set import (
    API_VERSION,
    CRD_NAME,
    INSTALL_COMMAND,
    pod_template,
    stale_condition_finding,
)
from vllm_serving.render.kubernetes.objects import KubernetesObjects, render_objects
from vllm_serving.render.kubernetes.parts import (
    DOCKER_HUB,
    SECRETS_CHECKSUM,
    Obj,
    credentials_checksum,
    dockerconfigjson,
    rollout_seconds,
    secret_env_keys,
)
from vllm_serving.render.rollout_hints import kubernetes_pending_hint
from vllm_serving.spec import ServingSpec
from vllm_serving.timing import KUBERNETES_TIMEOUT_MARGIN_SECONDS, whole_minutes

TYPE = "vllm-serving:kubernetes:VllmKubernetes"


def deployment_timeout(spec: ServingSpec) -> str:
    """`custom_timeouts` for the workload's create (every replica starts at once), in whole minutes."""
    return whole_minutes(rollout_seconds(spec) + KUBERNETES_TIMEOUT_MARGIN_SECONDS)


def rollout_steps(workload: Obj) -> int:
    """How many replicas (LeaderWorkerSet groups) an update replaces one batch after another:
    `Recreate` all at once, a rolling update `maxUnavailable` at a time (never surging)."""
    spec = workload["spec"]
    strategy = spec.get("strategy") or spec.get("rolloutStrategy") or {}
    if strategy.get("type") == "Recreate":
        return 1
    rolling = strategy.get("rollingUpdate") or strategy.get("rollingUpdateConfiguration") or {}
    batch = rolling.get("maxUnavailable", 1)
    return math.ceil(int(spec.get("replicas", 1)) / (batch if isinstance(batch, int) and batch > 0 else 1))


def update_timeout(spec: ServingSpec, workload: Obj) -> str:
    """`custom_timeouts` for the workload's update: one model load per rollout step.

    pulumi-kubernetes awaits a whole rollout under one timer (provider/pkg/await/await.go `Update`:
    one `context.WithTimeout`; await/deployment.go waits for the new ReplicaSet to be available; a
    LeaderWorkerSet's `condition=Available` needs every group updated and ready, lws
    pkg/controllers/leaderworkerset_controller.go). With three replicas replaced one at a time, a
    single load's timeout would fail `pulumi up` a third of the way through the rollout.
    """
    return whole_minutes(rollout_steps(workload) * rollout_seconds(spec) + KUBERNETES_TIMEOUT_MARGIN_SECONDS)


def _status_fields(crd_spec: Any) -> frozenset[str]:
    """The fields of the LeaderWorkerSet version's status schema, in the CRD the cluster returned."""
    version = API_VERSION.rsplit("/", 1)[1]
    for served in (crd_spec.versions if crd_spec is not None else None) or []:
        if served.name == version:
            schema = served.schema.open_apiv3_schema if served.schema is not None else None
            status = (schema.properties or {}).get("status") if schema is not None else None
            return frozenset(status.properties or {}) if status is not None else frozenset()
    return frozenset()


def _await_checked(crd_spec: Any, crd: pulumi.Resource | None) -> pulumi.Resource:
    """The CRD, once its LeaderWorkerSet records generations; else stop with the version to upgrade to."""
    finding = stale_condition_finding(_status_fields(crd_spec))
    if finding is not None:
        raise pulumi.RunError(ConfigError([finding]).render())
    assert crd is not None
    return crd


class VllmKubernetes(pulumi.ComponentResource):
    """Namespace, pull and credential Secrets, claims, Deployment or LeaderWorkerSet, Service,
    NetworkPolicy, PDB."""

    outputs: dict[str, pulumi.Input[Any]]

    def __init__(
        self,
        name: str,
        spec: ServingSpec,
        secrets: Mapping[str, pulumi.Input[str]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        self._spec = spec
        self._secrets = dict(secrets or {})
        objects = render_objects(spec)  # secret values masked; the real ones are set below
        self.lws_crd = self._lws_crd(name, objects)
        # nothing is created before the read CRD passed the check (`_await_checked`)
        gate: list[pulumi.Input[pulumi.Resource]] = [] if self.lws_crd is None else [
            self.lws_crd.spec.apply(lambda crd_spec: _await_checked(crd_spec, self.lws_crd))]
        # prometheus-operator's CRDs (observability.prometheusOperator) are read first too
        self.monitoring_crds = operator_crds(self, name, spec)
        gate += self.monitoring_crds
        # what `destroy` keeps, a later `up` adopts (adopting_provider.py)
        self.adopting: k8s.Provider | None = None
        if objects.namespace is not None or objects.weights_claim is not None or objects.cache_claim is not None:
            self.adopting = adopting_provider(name, self)
        self.namespace_resource: k8s.core.v1.Namespace | None = None
        if objects.namespace is not None:
            # Deleting a namespace deletes every claim in it, retain_on_delete on the claims
            # notwithstanding: a namespace the stack creates is never deleted (destroy, rename).
            self.namespace_resource = k8s.core.v1.Namespace(
                f"{name}-namespace", metadata=objects.namespace["metadata"],
                opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True, depends_on=gate,
                                            protect=spec.settings.model.protect, provider=self.adopting))
        first: list[pulumi.Input[pulumi.Resource]] = [self.namespace_resource] if self.namespace_resource else gate
        self.registry_secret = self._registry_secret(name, objects, first)
        self.credentials_secret = self._credentials_secret(name, objects, first)
        self.weights_claim = self._claim(
            f"{name}-weights", objects.weights_claim, first, protect=spec.settings.model.protect)
        self.cache_claim = self._claim(f"{name}-cache", objects.cache_claim, first, protect=False)
        needed = [r for r in (*first, self.registry_secret, self.credentials_secret,
                              self.weights_claim, self.cache_claim) if r is not None]
        timeouts = pulumi.CustomTimeouts(create=deployment_timeout(spec),
                                         update=update_timeout(spec, objects.workload))
        workload_options = pulumi.ResourceOptions(parent=self, depends_on=needed, custom_timeouts=timeouts)
        self.deployment: k8s.apps.v1.Deployment | None = None
        self.leader_worker_set: k8s.apiextensions.CustomResource | None = None
        workload: pulumi.Resource
        if objects.leader_worker_set is not None:
            lws = objects.leader_worker_set
            self.leader_worker_set = workload = k8s.apiextensions.CustomResource(
                name, api_version=lws["apiVersion"], kind=lws["kind"], metadata=lws["metadata"],
                spec=self._rolling_on_new_credentials(lws), opts=workload_options)
        else:
            assert objects.deployment is not None
            self.deployment = workload = k8s.apps.v1.Deployment(
                name, metadata=objects.deployment["metadata"],
                spec=self._rolling_on_new_credentials(objects.deployment), opts=workload_options)
        # the provider's timeout names no GPU; this line, printed with the resource, does
        pulumi.log.info(kubernetes_pending_hint(
            spec.settings.kubernetes.namespace, spec.name, pod_template(objects.workload)["spec"],
        ), resource=workload)
        self.service = k8s.core.v1.Service(
            name, metadata=objects.service["metadata"], spec=objects.service["spec"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=first))
        self.network_policy: k8s.networking.v1.NetworkPolicy | None = None
        if objects.network_policy is not None:
            self.network_policy = k8s.networking.v1.NetworkPolicy(
                name, metadata=objects.network_policy["metadata"], spec=objects.network_policy["spec"],
                opts=pulumi.ResourceOptions(parent=self, depends_on=first))
        self.disruption_budget: k8s.policy.v1.PodDisruptionBudget | None = None
        if objects.disruption_budget is not None:
            self.disruption_budget = k8s.policy.v1.PodDisruptionBudget(
                name, metadata=objects.disruption_budget["metadata"],
                spec=objects.disruption_budget["spec"],
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*first, workload]))
        # ServiceMonitor, PrometheusRule, dashboard ConfigMap: with `observability` on (monitoring.py)
        self.monitoring = monitoring_resources(self, name, spec, first, self.monitoring_crds)
        self.outputs = self._outputs(objects)
        self.register_outputs(self.outputs)

    def _lws_crd(self, name: str, objects: KubernetesObjects) -> k8s.apiextensions.v1.CustomResourceDefinition | None:
        """Read the LeaderWorkerSet CRD when the stack needs it; a cluster without it fails the read
        ("resource ... does not exist"), and this line beside it says how to install it."""
        if objects.leader_worker_set is None:
            return None
        crd = k8s.apiextensions.v1.CustomResourceDefinition.get(
            f"{name}-lws-crd", CRD_NAME, opts=pulumi.ResourceOptions(parent=self))
        pulumi.log.info(f"a server across nodes is a LeaderWorkerSet: the cluster needs its CRD ({CRD_NAME}); "
                        f"install it with: {INSTALL_COMMAND}", resource=crd)
        return crd

    def _rolling_on_new_credentials(self, workload: Obj) -> Any:
        """The workload's spec with the real credentials' checksum on the (leader's) pod template."""
        body: Any = copy.deepcopy(workload["spec"])
        keys = secret_env_keys(self._spec)
        if keys:
            values = pulumi.Output.all(**{key: self._secret(key) for key in keys.values()})
            # a slow salted hash, not the values: safe to show in the preview diff
            pod_template(workload, body)["metadata"]["annotations"][SECRETS_CHECKSUM] = pulumi.Output.unsecret(
                values.apply(lambda v: credentials_checksum(self._spec, v)))
        return body

    def _secret(self, key: str) -> pulumi.Output[str]:
        if key not in self._secrets:
            raise ValueError(f"the stack sets the secret {key} but no value was passed to VllmKubernetes")
        return pulumi.Output.secret(self._secrets[key])

    def _registry_secret(self, name: str, objects: KubernetesObjects,
                         first: list[pulumi.Input[pulumi.Resource]]) -> k8s.core.v1.Secret | None:
        obj = objects.registry_secret
        if obj is None:
            return None
        image = self._spec.settings.image
        registry, username = image.registry or DOCKER_HUB, image.username or ""
        config = self._secret("registryPassword").apply(
            lambda password: dockerconfigjson(registry, username, password))
        return k8s.core.v1.Secret(
            f"{name}-registry", metadata=obj["metadata"], type=obj["type"],
            string_data={".dockerconfigjson": config},  # secret: derived from a secret
            opts=pulumi.ResourceOptions(parent=self, depends_on=first))

    def _credentials_secret(self, name: str, objects: KubernetesObjects,
                            first: list[pulumi.Input[pulumi.Resource]]) -> k8s.core.v1.Secret | None:
        obj = objects.credentials_secret
        if obj is None:
            return None
        data = {env: self._secret(key) for env, key in secret_env_keys(self._spec).items()}
        return k8s.core.v1.Secret(
            f"{name}-credentials", metadata=obj["metadata"], type=obj["type"], string_data=data,
            opts=pulumi.ResourceOptions(parent=self, depends_on=first))

    def _claim(self, logical: str, obj: Obj | None, first: list[pulumi.Input[pulumi.Resource]],
               protect: bool) -> k8s.core.v1.PersistentVolumeClaim | None:
        """A claim: weights and compile cache both survive `destroy`; `protect` on request."""
        if obj is None:
            return None
        options = pulumi.ResourceOptions(
            parent=self, depends_on=first, retain_on_delete=True, protect=protect, provider=self.adopting)
        return k8s.core.v1.PersistentVolumeClaim(
            logical, metadata=obj["metadata"], spec=obj["spec"], opts=options)

    def _outputs(self, objects: KubernetesObjects) -> dict[str, pulumi.Input[Any]]:
        spec = self._spec
        workload = objects.workload
        return {
            **spec.endpoints(),
            "servedModelName": spec.served_model_name,
            "vllmArgs": list(spec.args),
            "namespace": self.service.metadata.apply(lambda m: m.namespace),
            "serviceName": self.service.metadata.apply(lambda m: m.name),
            # how the servers behind the Service are laid out, and that their KV caches are apart
            "scaleOut": {"workload": f"{workload['kind']} {workload['metadata']['name']}",
                         **scale_out_view(scale_out(spec.settings), plan_capacity(spec))},
        }
