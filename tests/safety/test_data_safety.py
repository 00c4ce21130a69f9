"""Data and replacement safety over every stack file in the repository (and volume variants).

A replacement must never collide with the old container (fixed name or host port ->
delete_before_replace); weights and caches survive `destroy` (retain_on_delete, and protect
where model.protect asks); weights are mounted read-only everywhere; the cache stays writable.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conftest import shipped_stack
from tests.pulumi_harness import ProgramRun, Registered
from tests.safety.helpers import SENTINELS, stacks_of_kind
from vllm_serving.settings import VLLM_CACHE_PATH
from vllm_serving.settings.release import bare_stack

P = "vllm-serving:"
DOCKER = stacks_of_kind("docker")
K8S = stacks_of_kind("kubernetes")


def docker_variants() -> list[tuple[str, str, dict[str, Any]]]:
    """Each Docker stack as shipped, and with weights and cache in named volumes (protected)."""
    found = []
    for stack in DOCKER:
        config = shipped_stack(stack)
        found.append((stack, "shipped", config))
        if "promoteFrom" in (config.get(P + "release") or {}):
            continue  # its weights location is the release's: the source's variant covers it
        volumes = copy.deepcopy(config)
        model = {k: v for k, v in volumes[P + "model"].items() if k != "hostPath"}
        model.update(volumeName=f"{stack}-weights", protect=True)
        model.setdefault("containerPath", "/models/weights")
        volumes[P + "model"] = model
        volumes[P + "cache"] = {"volumeName": f"{stack}-compile-cache"}
        found.append((stack, "volumes", volumes))
    return found


def k8s_variants() -> list[tuple[str, str, dict[str, Any]]]:
    """Each Kubernetes stack as shipped, and with a weights claim it creates (protected)."""
    found = []
    for stack in K8S:
        config = shipped_stack(stack)
        found.append((stack, "shipped", config))
        claim = copy.deepcopy(config)
        claim[P + "model"] = {**claim[P + "model"], "protect": True}
        k8s = dict(claim.get(P + "kubernetes") or {})
        k8s["weights"] = {"claim": {"size": "64g"}}
        claim[P + "kubernetes"] = k8s
        found.append((stack, "claim", claim))
    return found


def _run(program: Any, stack: str, config: dict[str, Any]) -> ProgramRun:
    run: ProgramRun = program(config, stack=stack, secrets=SENTINELS)
    return run


def _ids(variants: list[tuple[str, str, dict[str, Any]]]) -> list[str]:
    return [f"{stack}-{kind}" for stack, kind, _ in variants]


def _wants_protect(config: dict[str, Any]) -> bool:
    return bool((config.get(P + "model") or {}).get("protect", False))


def _model(config: dict[str, Any]) -> dict[str, Any]:
    """The model section the stack deploys: a promoted stack's weights are its source's."""
    model: dict[str, Any] = config[P + "model"]
    source = (config.get(P + "release") or {}).get("promoteFrom")
    if source:
        return {**shipped_stack(bare_stack(source))[P + "model"], **model}
    return model


@pytest.mark.parametrize(("stack", "kind", "config"), docker_variants(), ids=_ids(docker_variants()))
def test_docker_replacement_and_volumes(program: Any, stack: str, kind: str, config: dict[str, Any]) -> None:
    run = _run(program, stack, config)
    for r in run.resources:
        fixed_port = any(p.get("external") for p in r.inputs.get("ports") or [])
        fixed_name = r.type == "docker:index/container:Container" and "name" in r.inputs  # the preflight is auto-named
        if fixed_name or fixed_port:
            assert r.delete_before_replace, f"{r.name}: fixed name/port needs delete_before_replace"
    for image in run.of_type("docker:index/remoteImage:RemoteImage"):
        assert image.inputs.get("keepLocally") is True, "a ~20 GB image must stay on the host"
    volumes = run.of_type("docker:index/volume:Volume")
    for volume in volumes:
        assert volume.retain_on_delete, f"{volume.name}: a data volume must survive destroy"
    weights_volume = _model(config).get("volumeName")
    if weights_volume:
        (weights,) = [v for v in volumes if v.inputs.get("name") == weights_volume]
        assert weights.protect is _wants_protect(config)
        assert len(volumes) >= 2, "the named cache volume is registered too"
    for volume in volumes:
        if volume.inputs.get("name") != weights_volume:
            assert not volume.protect or _wants_protect(config)
    _docker_mounts(run.one("Container"), config)


def _docker_mounts(container: Registered, config: dict[str, Any]) -> None:
    mounts = container.inputs["volumes"]
    model = _model(config)
    source = model.get("hostPath") or model.get("volumeName")
    weights = [m for m in mounts if source in (m.get("hostPath"), m.get("volumeName"))]
    assert weights, "the weights are mounted"
    for mount in weights:
        assert mount.get("readOnly") is True, f"weights mounted writable: {mount}"
    cache = [m for m in mounts if m["containerPath"] == VLLM_CACHE_PATH]
    if (config.get(P + "cache") or {}).get("enabled", True):
        assert cache, "the compile cache is mounted"
    for mount in cache:
        assert not mount.get("readOnly"), f"the compile cache must stay writable: {mount}"


@pytest.mark.parametrize(("stack", "kind", "config"), k8s_variants(), ids=_ids(k8s_variants()))
def test_kubernetes_claims_and_mounts(program: Any, stack: str, kind: str, config: dict[str, Any]) -> None:
    run = _run(program, stack, config)
    claims = run.of_type("core/v1:PersistentVolumeClaim")
    weights = [c for c in claims if c.name.endswith("-weights")]
    if kind == "claim":
        assert weights, "the weights claim is registered"
    for claim in weights:
        assert claim.retain_on_delete, f"PVC {claim.name} must survive destroy"
        assert claim.protect is _wants_protect(config)
    deployment = run.one("apps/v1:Deployment")
    pod = deployment.inputs["spec"]["template"]["spec"]
    by_name = {v["name"]: v for v in pod["volumes"]}
    mount_path = _model(config)["containerPath"]
    for container in pod["containers"]:
        assert not any(p.get("hostPort") for p in container.get("ports", [])), "hostPort collides on rollout"
        for mount in container["volumeMounts"]:
            volume = by_name[mount["name"]]
            if mount["mountPath"] == mount_path:
                assert mount.get("readOnly") is True, f"weights mounted writable: {mount}"
                claim = volume.get("persistentVolumeClaim")
                assert claim is None or claim.get("readOnly") is True
            if mount["mountPath"] == VLLM_CACHE_PATH:
                assert not mount.get("readOnly"), "the compile cache must stay writable"
    assert any(m["mountPath"] == mount_path for c in pod["containers"] for m in c["volumeMounts"])


@pytest.mark.parametrize(("stack", "kind", "config"), k8s_variants(), ids=_ids(k8s_variants()))
def test_kubernetes_cache_claim_survives_destroy(program: Any, stack: str, kind: str,
                                                 config: dict[str, Any]) -> None:
    claims = _run(program, stack, config).of_type("core/v1:PersistentVolumeClaim")
    cache = [c for c in claims if not c.name.endswith("-weights")]
    assert cache, "the compile-cache claim is registered"
    for claim in cache:
        assert claim.retain_on_delete, f"PVC {claim.name} must survive destroy"


def test_every_stack_file_is_covered() -> None:
    """A new stack file lands in one of the two groups above (unknown kinds would be skipped)."""
    from tests.safety.helpers import stack_files, stack_kind

    assert {stack_kind(p) for p in stack_files()} <= {"docker", "kubernetes"}
    assert DOCKER and len(DOCKER) + len(K8S) == len(stack_files())
