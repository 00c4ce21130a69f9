"""A pod Pending for lack of GPUs: `pulumi up` shows, next to the Deployment, what each pod asks
for, on which nodes, and the kubectl commands that show why it was not scheduled."""

from __future__ import annotations

from typing import Any

from tests.conftest import shipped_stack


def test_pending_hint_names_the_gpu_request_selector_and_describe(program) -> None:
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={})
    deployment = run.one("apps/v1:Deployment").inputs
    pod = deployment["spec"]["template"]["spec"]
    limits = pod["containers"][0]["resources"]["limits"]
    hints = [line for line in run.infos if "Pending" in line]
    assert len(hints) == 1
    hint = hints[0]
    assert f"{limits['nvidia.com/gpu']} x nvidia.com/gpu" in hint
    for key, value in pod["nodeSelector"].items():
        assert f"{key}={value}" in hint
    namespace = deployment["metadata"]["namespace"]
    assert f"kubectl -n {namespace} describe pod -l app.kubernetes.io/instance=" in hint
    assert "kubernetes.nodeSelector" in hint and "hardware.count" in hint


def test_pending_hint_is_printed_beside_the_workload(program) -> None:
    # the provider's timeout error shows in the workload's row of `pulumi up`: the hint that says
    # why must stand there too, not at the top of a long output
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s", secrets={})
    (hint,) = [line for line in run.logged if "Pending" in line.message]
    assert hint.level == "info"
    assert hint.urn.endswith("$kubernetes:apps/v1:Deployment::vllm"), hint.urn


def test_pending_hint_follows_a_custom_node_selector(program) -> None:
    config: dict[str, Any] = shipped_stack("a100-k8s")
    config["vllm-serving:kubernetes"] = {**config["vllm-serving:kubernetes"],
                                         "nodeSelector": {"pool": "gpu-a100"}}
    run = program(config, stack="a100-k8s", secrets={})
    hint = next(line for line in run.infos if "Pending" in line)
    assert "pool=gpu-a100" in hint and "kubectl get nodes -l pool=gpu-a100" in hint
