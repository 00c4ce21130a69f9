"""On Kubernetes the preflight is the pod's init container: the server's image, GPUs and weights, checked first."""

from __future__ import annotations

from typing import Any

import pytest

from tests.stack_builders import make_spec
from vllm_serving.preflight import script
from vllm_serving.preflight.command import CHECKS, SCRIPT_TEXT
from vllm_serving.render.kubernetes.workload import pod_spec


def _pod(**sections: Any) -> dict[str, Any]:
    pod: dict[str, Any] = pod_spec(make_spec("a100-k8s", **sections))
    return pod


def test_the_init_container_checks_what_the_server_gets() -> None:
    spec = make_spec("a100-k8s")
    pod = pod_spec(spec)
    (init,), (server,) = pod["initContainers"], pod["containers"]
    assert init["name"] == "preflight"
    for key in ("image", "imagePullPolicy", "resources", "securityContext"):
        assert init[key] == server[key], key
    gpus = server["resources"]["limits"][spec.settings.kubernetes.gpu_resource]
    assert init["resources"]["limits"][spec.settings.kubernetes.gpu_resource] == gpus == "4"
    assert init["volumeMounts"] == [m for m in server["volumeMounts"] if m["name"] == "weights"]
    assert init["volumeMounts"][0]["readOnly"] is True
    assert init["command"] == ["python3", "-c", SCRIPT_TEXT]
    args = script.parse(init["args"])
    # probes are httpGet: no curl check
    assert (args.backend, args.checks) == ("kubernetes", list(CHECKS["kubernetes"])) and "curl" not in args.checks
    assert (args.gpus, args.capability, args.weights) == (4, "8.0", spec.settings.model.mount_path)
    assert not {"ports", "env", "startupProbe", "livenessProbe", "readinessProbe"} & set(init)


@pytest.mark.parametrize(("sections", "source"), [
    ({}, "the PersistentVolumeClaim qwen3-6-27b-fp8 (vllm-serving:model.volumeName)"),
    ({"model": {"volumeName": None, "hostPath": "/srv/models/Qwen3.6-27B-FP8"}},
     "the node directory /srv/models/Qwen3.6-27B-FP8 (vllm-serving:model.hostPath)"),
    ({"kubernetes": {"weights": {"existingClaim": "shared-models"}}},
     "the PersistentVolumeClaim shared-models (vllm-serving:kubernetes.weights)"),
])
def test_the_fix_names_where_the_weights_come_from(sections: dict[str, Any], source: str) -> None:
    (init,) = _pod(**sections)["initContainers"]
    assert source in script.parse(init["args"]).weights_source


def test_disabled_leaves_no_init_container() -> None:
    assert "initContainers" not in _pod(preflight={"enabled": False})
