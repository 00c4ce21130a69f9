"""The names other programs read in the Kubernetes objects: the custom resources' API group, version
and kind (the installed CRDs), Pulumi's annotations, the Docker Hub key of a pull secret, label
values the API server accepts, the container kubectl picks. Each expected value comes from the
program that reads it (the vendored CRDs, pulumi-kubernetes, Docker's config format, Kubernetes'
validation rules), never from the renderer."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

import pytest
import yaml

from tests.crd_schema import LWS_V0_8, read_crd
from tests.kubernetes.multi_node_stacks import two_node_spec
from tests.paths import FIXTURES, ROOT
from tests.stack_builders import make_spec
from vllm_serving.findings import ConfigError, Severity
from vllm_serving.render.kubernetes import leader_worker_set, monitoring
from vllm_serving.render.kubernetes.objects import kubernetes_objects, render_objects

CRDS = FIXTURES / "crds"
OBSERVED = {"prometheusOperator": True, "grafanaDashboard": True}
# Kubernetes' label value syntax (apimachinery pkg/util/validation/validation.go `IsValidLabelValue`):
# at most 63 characters, alphanumeric at both ends, `-`, `_` and `.` inside.
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _crd(file: str) -> dict[str, Any]:
    text = (CRDS / file).read_text(encoding="utf-8")
    crd: dict[str, Any] = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return crd


def _by_kind(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for o in objects}


@pytest.mark.parametrize(("file", "kind"), [
    ("leaderworkerset.x-k8s.io_leaderworkersets.yaml", "LeaderWorkerSet"),
    ("monitoring.coreos.com_servicemonitors.yaml", "ServiceMonitor"),
    ("monitoring.coreos.com_prometheusrules.yaml", "PrometheusRule"),
])
def test_a_custom_resource_names_the_group_version_and_kind_its_crd_serves(file: str, kind: str) -> None:
    """The API server routes a custom resource by `apiVersion` (the CRD's group and a served
    version) and `kind` (the CRD's names.kind); any other spelling is `no matches for kind`."""
    crd = _crd(file)
    served = [v["name"] for v in crd["spec"]["versions"] if v["served"]]
    objects = (kubernetes_objects(two_node_spec()) if kind == "LeaderWorkerSet"
               else kubernetes_objects(make_spec(observability=OBSERVED)))
    obj = _by_kind(objects)[kind]
    group, _, version = obj["apiVersion"].partition("/")
    assert group == crd["spec"]["group"] and version in served
    assert obj["kind"] == crd["spec"]["names"]["kind"]


def test_the_crds_the_program_reads_are_named_as_installed() -> None:
    """`CustomResourceDefinition.get` by these names; the installed CRD's metadata.name is its
    plural and group, as in the vendored files."""
    assert leader_worker_set.CRD_NAME == _crd("leaderworkerset.x-k8s.io_leaderworkersets.yaml")["metadata"]["name"]
    assert monitoring.CRD_NAMES == (_crd("monitoring.coreos.com_servicemonitors.yaml")["metadata"]["name"],
                                    _crd("monitoring.coreos.com_prometheusrules.yaml")["metadata"]["name"])


def test_the_install_commands_name_the_releases_the_objects_are_valid_for() -> None:
    """What a user without the CRDs is told to install is the release whose CRD the objects are
    checked against (each vendored file's header and annotations say which)."""
    header = (CRDS / "leaderworkerset.x-k8s.io_leaderworkersets.yaml").read_text(encoding="utf-8").splitlines()[0]
    lws = re.search(r"lws (v[0-9.]+)", header)
    assert lws is not None
    assert leader_worker_set.INSTALL_COMMAND == (
        "kubectl apply --server-side -f "
        f"https://github.com/kubernetes-sigs/lws/releases/download/{lws.group(1)}/manifests.yaml")
    annotations = _crd("monitoring.coreos.com_servicemonitors.yaml")["metadata"]["annotations"]
    operator = annotations["operator.prometheus.io/version"]
    assert f"/releases/download/v{operator}/stripped-down-crds.yaml" in monitoring.INSTALL_HINT
    assert "observability.prometheusOperator: false" in monitoring.INSTALL_HINT


def test_an_lws_without_observed_generation_is_refused_naming_the_upgrade() -> None:
    """v0.8.0's status has no observedGeneration (tests/fixtures/crds/, lws #807 added it in v0.9.0)."""
    def status_fields(crd: dict[str, Any]) -> set[str]:
        version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
        return set(version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"])

    old = read_crd(leader_worker_set.CRD_NAME, LWS_V0_8)
    current = read_crd(leader_worker_set.CRD_NAME)
    assert leader_worker_set.stale_condition_finding(status_fields(current)) is None
    finding = leader_worker_set.stale_condition_finding(status_fields(old))
    assert finding is not None
    assert (finding.code, finding.severity, finding.key) == (
        "k8s-lws-outdated", Severity.ERROR, "vllm-serving:kubernetes.nodes")
    assert "leaderworkersets.leaderworkerset.x-k8s.io" in finding.message
    assert "v0.9.0 or later" in finding.fix and "kubernetes.nodes: 1" in finding.fix
    assert "releases/download/v0.10.0/manifests.yaml" in finding.fix


def test_pulumi_reads_its_annotations_as_set() -> None:
    """pulumi-kubernetes (provider/pkg/metadata/annotations.go) reads `pulumi.com/patchForce` and
    `pulumi.com/skipAwait` only when exactly "true", and `pulumi.com/waitFor` as a kubectl-wait
    condition. The workload is awaited (it tells whether the server came up); the Service and the
    claims are not (their awaits would fail while the model loads or before a pod binds them)."""
    single = kubernetes_objects(make_spec(kubernetes={"weights": {"claim": {"size": "64g"}}}))
    multi = kubernetes_objects(two_node_spec())
    for obj in (*single, *multi):
        annotations = obj["metadata"]["annotations"]
        assert annotations["pulumi.com/patchForce"] == "true", obj["kind"]
        skipped = annotations.get("pulumi.com/skipAwait")
        if obj["kind"] in ("Service", "PersistentVolumeClaim"):
            assert skipped == "true", obj["kind"]
        else:
            assert skipped is None, obj["kind"]
    lws = _by_kind(multi)["LeaderWorkerSet"]
    assert lws["metadata"]["annotations"]["pulumi.com/waitFor"] == "condition=Available"
    assert "pulumi.com/waitFor" not in _by_kind(single)["Deployment"]["metadata"]["annotations"]


def test_a_docker_hub_pull_secret_uses_docker_hubs_key() -> None:
    """Docker's config.json keys Docker Hub as https://index.docker.io/v1/ (docker/cli
    registry.IndexServer); `auth` is base64 of user:password, by hand: base64("robot:pw") = cm9ib3Q6cHc=."""
    spec = make_spec(secrets=("registryPassword",), image={"username": "robot"})
    secret = render_objects(spec, {"registryPassword": "pw"}).registry_secret
    assert secret is not None
    auths = json.loads(secret["stringData"][".dockerconfigjson"])["auths"]
    assert auths == {"https://index.docker.io/v1/": {"username": "robot", "password": "pw", "auth": "cm9ib3Q6cHc="}}
    assert base64.b64decode("cm9ib3Q6cHc=") == b"robot:pw"


def test_no_pull_secret_without_a_username_or_a_password() -> None:
    assert render_objects(make_spec(secrets=("registryPassword",))).registry_secret is None
    assert render_objects(make_spec(image={"username": "robot"})).registry_secret is None


@pytest.mark.parametrize(("image", "version"), [
    ({"tag": "v0.19.1"}, "v0.19.1"),
    # a digest alone: its first 12 hex digits, as `docker images` shortens an id
    ({"tag": None, "digest": "sha256:" + "0123456789ab" + "cd" * 26}, "0123456789ab"),
    # a tag may be 128 characters and start with `_`; a label value neither
    ({"tag": "_" + "a" * 70 + "_"}, "a" * 62),
])
def test_the_version_label_is_a_value_the_api_server_accepts(image: dict[str, Any], version: str) -> None:
    for obj in kubernetes_objects(make_spec(image=image)):
        value = obj["metadata"]["labels"]["app.kubernetes.io/version"]
        assert value == version and len(value) <= 63 and LABEL_VALUE.match(value), obj["kind"]


@pytest.mark.parametrize("name", ["Vllm", "vllm_1", "1vllm", "vllm-", "v" * 64])
def test_a_container_name_no_service_can_have_is_refused_naming_the_key(name: str) -> None:
    """A Service's name is an RFC 1035 label: lower-case letter first, letters, digits and `-`,
    alphanumeric last, at most 63 characters (apimachinery `IsDNS1035Label`)."""
    with pytest.raises(ConfigError) as err:
        render_objects(make_spec(container={"name": name}))
    finding = err.value.findings[0]
    assert (finding.code, finding.severity, finding.key) == ("k8s-name", Severity.ERROR, "vllm-serving:container.name")
    assert f"'{name}'" in finding.message and "starting with a letter" in finding.fix


@pytest.mark.parametrize("name", ["v", "vllm-2", "v" * 63])
def test_a_valid_container_name_names_every_object(name: str) -> None:
    objs = render_objects(make_spec(container={"name": name}))
    assert objs.workload["metadata"]["name"] == objs.service["metadata"]["name"] == name


def test_kubectl_picks_the_server_container() -> None:
    """`kubectl logs deploy/vllm -c vllm` (docs/kubernetes.md) and the default-container
    annotation kubectl reads when no `-c` is given."""
    template = render_objects(make_spec()).workload["spec"]["template"]
    assert [c["name"] for c in template["spec"]["containers"]] == ["vllm"]
    assert template["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] == "vllm"
    assert [c["name"] for c in template["spec"]["initContainers"]] == ["preflight"]


def test_the_dashboard_carries_the_label_grafanas_sidecar_watches() -> None:
    """kube-prometheus-stack's Grafana sidecar loads ConfigMaps labelled grafana_dashboard: "1"
    (its values.yaml `grafana.sidecar.dashboards.label`/`labelValue`; docs/observability.md)."""
    spec = make_spec(observability={**OBSERVED, "labels": {"release": "kube-prometheus-stack"}})
    found = _by_kind(kubernetes_objects(spec))
    assert found["ConfigMap"]["metadata"]["labels"]["grafana_dashboard"] == "1"
    # one .json file (the sidecar's file pattern), named after the stack (two stacks' dashboards
    # share the sidecar's folder)
    (file,) = found["ConfigMap"]["data"]
    assert file == "vllm-a100-k8s.json" and json.loads(found["ConfigMap"]["data"][file])["panels"]
    # the labels kube-prometheus-stack's Prometheus selects monitors and rules by
    for kind in ("ServiceMonitor", "PrometheusRule"):
        assert found[kind]["metadata"]["labels"]["release"] == "kube-prometheus-stack", kind


def test_monitoring_objects_only_on_a_cluster_and_as_turned_on() -> None:
    kinds = [o["kind"] for o in monitoring.monitoring_objects(make_spec(observability=OBSERVED))]
    assert kinds == ["ServiceMonitor", "PrometheusRule", "ConfigMap"]
    assert monitoring.monitoring_objects(make_spec("a100", observability=OBSERVED)) == []
    only_rules = make_spec(observability={"prometheusOperator": True})
    assert [o["kind"] for o in monitoring.monitoring_objects(only_rules)] == ["ServiceMonitor", "PrometheusRule"]
    assert monitoring.monitoring_objects(make_spec()) == []


def test_the_credentials_checksum_keeps_its_key_and_derivation_across_releases() -> None:
    """A pod-template annotation whose key or value changes rolls every server (a model load each)
    on the upgrade that changes it, with no credential changed: both stay as first released. The
    value, by hand: PBKDF2-HMAC-SHA256 over `ENV=value` lines joined by NUL, salted with
    `vllm-serving/<namespace>/<container name>`, 200 000 rounds, the first 32 hex digits."""
    spec = make_spec(secrets=("apiKey", "hfToken"))
    annotations = render_objects(spec, {"apiKey": "key-one", "hfToken": "hf-two"}).workload[
        "spec"]["template"]["metadata"]["annotations"]
    expected = hashlib.pbkdf2_hmac("sha256", b"HF_TOKEN=hf-two\0VLLM_API_KEY=key-one",
                                   b"vllm-serving/vllm/vllm", 200_000).hex()[:32]
    assert annotations["vllm-serving/credentials-checksum"] == expected


def _documented_components() -> set[str]:
    """docs/kubernetes.md's list of `app.kubernetes.io/component` values."""
    text = " ".join((ROOT / "docs" / "kubernetes.md").read_text(encoding="utf-8").split())
    start = text.index("`component`, which says what the object is for")
    sentence = text[start:text.index("ConfigMap).", start)]
    return set(re.findall(r"`([a-z-]+)`", sentence.split("):", 1)[1]))


def test_every_object_carries_the_component_label_the_docs_give() -> None:
    """What `kubectl get ... -l app.kubernetes.io/component=...` finds."""
    documented = _documented_components()
    assert documented == {"inference-server", "inference-worker", "model-weights", "compile-cache", "credentials",
                          "namespace", "monitoring"}
    spec = make_spec(secrets=("apiKey", "registryPassword"), image={"username": "robot"},
                     kubernetes={"weights": {"claim": {"size": "64g", "accessMode": "ReadOnlyMany"}}, "replicas": 2,
                                 "cache": {"accessMode": "ReadWriteMany"}},
                     observability=OBSERVED)
    expected = {"Namespace": "namespace", "Secret": "credentials", "Deployment": "inference-server",
                "Service": "inference-server", "NetworkPolicy": "inference-server",
                "PodDisruptionBudget": "inference-server", "ServiceMonitor": "monitoring",
                "PrometheusRule": "monitoring", "ConfigMap": "monitoring"}
    for obj in kubernetes_objects(spec):
        component = obj["metadata"]["labels"]["app.kubernetes.io/component"]
        if obj["kind"] == "PersistentVolumeClaim":
            claims = {"vllm-weights": "model-weights", "vllm-cache": "compile-cache"}
            assert component == claims[obj["metadata"]["name"]]
        else:
            assert component == expected[obj["kind"]], obj["kind"]
        assert component in documented, component
    lws = render_objects(two_node_spec()).workload["spec"]["leaderWorkerTemplate"]
    assert lws["leaderTemplate"]["metadata"]["labels"]["app.kubernetes.io/component"] == "inference-server"
    assert lws["workerTemplate"]["metadata"]["labels"]["app.kubernetes.io/component"] == "inference-worker"
