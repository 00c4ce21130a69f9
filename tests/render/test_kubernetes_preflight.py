"""On Kubernetes the preflight is the pod's init container: the server's image, GPUs and weights, checked first."""

from __future__ import annotations

from typing import Any

import pytest

from tests.kubernetes.multi_node_stacks import two_node_spec
from tests.stack_builders import make_spec
from vllm_serving.preflight.command import CHECKS, PROGRAM
from vllm_serving.preflight.in_image import main as script
from vllm_serving.render.kubernetes.objects import render_objects
from vllm_serving.render.kubernetes.preflight import preflight_init_containers
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
    assert init["command"] == ["python3", "-c", PROGRAM]
    args = script.parse(init["args"])
    # probes are httpGet: no curl check
    assert (args.backend, args.checks) == ("kubernetes", list(CHECKS["kubernetes"])) and "curl" not in args.checks
    assert (args.gpus, args.capability, args.weights) == (4, "8.0", spec.settings.model.mount_path)
    assert not {"ports", "startupProbe", "livenessProbe", "readinessProbe"} & set(init)
    assert args.serve_argv == server["args"], "vLLM judges the server's own argv, byte for byte"


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


def test_the_preflight_checks_the_gpu_count_it_is_given() -> None:
    spec = make_spec("a100-k8s")
    server = pod_spec(spec)["containers"][0]
    (init,) = preflight_init_containers(spec, server, 3)
    assert script.parse(init["args"]).gpus == 3


def test_each_pod_of_a_multi_node_server_checks_its_own_share() -> None:
    """TP 8 x PP 2 over two nodes: every pod's preflight asks for and checks 8 GPUs, not 16,
    exactly what the preflight renders when handed that pod's share."""
    spec = two_node_spec()
    assert spec.settings.engine.gpus_needed == 16
    lws = render_objects(spec).leader_worker_set
    assert lws is not None
    template = lws["spec"]["leaderWorkerTemplate"]
    for pod in (template["leaderTemplate"]["spec"], template["workerTemplate"]["spec"]):
        (init,), (server,) = pod["initContainers"], pod["containers"]
        assert script.parse(init["args"]).gpus == 8
        assert init["resources"]["limits"]["nvidia.com/gpu"] == server["resources"]["limits"]["nvidia.com/gpu"] == "8"
        (expected,) = preflight_init_containers(spec, server, 8)
        assert init["args"] == expected["args"]
        # the leader's and the workers' own argv (--node-rank, --headless), and env without secrets
        assert script.parse(init["args"]).serve_argv == server["args"]
        assert init["env"] == [e for e in server["env"] if "secretKeyRef" not in e.get("valueFrom", {})]


def test_the_init_container_gets_the_servers_environment_but_no_secret() -> None:
    spec = make_spec("a100-k8s", secrets=("apiKey", "hfToken"), engine={"env": {"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}})
    pod = pod_spec(spec)
    (init,), (server,) = pod["initContainers"], pod["containers"]
    assert {"name": "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "value": "1"} in init["env"]
    assert [e["name"] for e in server["env"] if "valueFrom" in e] == ["VLLM_API_KEY", "HF_TOKEN"]
    assert init["env"] == [e for e in server["env"] if "valueFrom" not in e]
