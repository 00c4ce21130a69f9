"""What a failed rollout tells the user to run: the logs command and the hints beside a waiting
resource. Expected commands are written out by hand from the stack files in tests/fixtures/project
(container name, namespace) and from the tools' own syntax (`docker -H HOST logs`, `kubectl logs -l`)."""

from __future__ import annotations

import shlex

from tests.stack_builders import make_spec
from vllm_serving.render.docker_container import container_spec
from vllm_serving.render.rollout_hints import (
    docker_logs_command,
    docker_never_healthy_hint,
    kubernetes_pending_hint,
    server_logs_command,
)


def test_a_docker_stack_is_told_to_read_its_own_container_on_its_own_host() -> None:
    # Pulumi.v100.yaml: container.name vllm-qwen35-27b, no target.dockerHost (the local engine)
    local = make_spec("v100")
    assert server_logs_command(local) == "docker logs --tail 200 vllm-qwen35-27b"
    remote = make_spec("v100", target={"dockerHost": "ssh://deploy@gpu-v100-01"})
    assert server_logs_command(remote) == "docker -H ssh://deploy@gpu-v100-01 logs --tail 200 vllm-qwen35-27b"


def test_the_logs_command_is_one_shell_word_per_argument() -> None:
    remote = make_spec("v100", target={"dockerHost": "ssh://deploy@gpu-v100-01:2222"})
    words = shlex.split(docker_logs_command(container_spec(remote), remote.settings.target.docker_host))
    assert words == ["docker", "-H", "ssh://deploy@gpu-v100-01:2222", "logs", "--tail", "200", "vllm-qwen35-27b"]


def test_a_kubernetes_stack_reads_every_replica_of_the_server_container_in_its_namespace() -> None:
    # Pulumi.a100-k8s.yaml: namespace vllm; the pods carry app.kubernetes.io/{name,instance}=vllm
    # and the server's container is `vllm`; --prefix names the pod on each line
    spec = make_spec("a100-k8s")
    assert server_logs_command(spec) == (
        "kubectl -n vllm logs -l app.kubernetes.io/instance=vllm,app.kubernetes.io/name=vllm "
        "-c vllm --prefix --tail 200")
    elsewhere = make_spec("a100-k8s", kubernetes={"namespace": "llm-prod"})
    assert shlex.split(server_logs_command(elsewhere))[:3] == ["kubectl", "-n", "llm-prod"]


def test_never_healthy_names_the_start_period_the_whole_wait_and_the_logs_command() -> None:
    # v100's weights give an 18-minute start-up budget (tests/test_spec.py): start period 18m0s;
    # Pulumi's wait adds the health checks' interval x (retries + 1) on top of it
    spec = make_spec("v100")
    container = container_spec(spec)
    hint = docker_never_healthy_hint(container, "ssh://deploy@gpu-v100-01")
    assert "container vllm-qwen35-27b must answer GET /health within its start period (18m0s)" in hint
    assert f"Pulumi waits {container.wait_timeout_seconds} s in all" in hint
    assert container.wait_timeout_seconds > 18 * 60
    assert "docker -H ssh://deploy@gpu-v100-01 logs --tail 200 vllm-qwen35-27b" in hint
    assert hint.endswith("container.startupTimeout")


def _pod(limits: dict[str, object], node_selector: dict[str, str] | None = None) -> dict[str, object]:
    pod: dict[str, object] = {"containers": [{"name": "vllm", "resources": {"limits": limits}}]}
    if node_selector is not None:
        pod["nodeSelector"] = node_selector
    return pod


def test_pending_names_the_gpus_asked_for_and_the_nodes_that_could_give_them() -> None:
    pod = _pod({"nvidia.com/gpu": 4, "cpu": "16", "memory": "64Gi"},
               {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "pool": "gpu"})
    hint = kubernetes_pending_hint("vllm", "qwen", pod)
    # only the GPU limit is named, the labels sorted by key
    assert hint.startswith("each vLLM pod asks for 4 x nvidia.com/gpu on nodes labelled "
                           "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB,pool=gpu. ")
    assert "kubectl -n vllm describe pod -l app.kubernetes.io/instance=qwen" in hint
    assert "kubectl get nodes -l nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB,pool=gpu" in hint
    assert hint.endswith("Fix: lower hardware.count and engine.tensorParallelSize, or correct kubernetes.nodeSelector")


def test_pending_without_a_selector_lists_every_node_and_quotes_a_selector_the_shell_would_split() -> None:
    plain = kubernetes_pending_hint("ns", "x", _pod({"nvidia.com/gpu": 1}))
    assert plain.startswith("each vLLM pod asks for 1 x nvidia.com/gpu. ")
    assert "; kubectl get nodes, then" in plain
    spaced = kubernetes_pending_hint("ns", "x", _pod({"nvidia.com/gpu": 2}, {"zone": "rack 1"}))
    assert "kubectl get nodes -l 'zone=rack 1'" in spaced


def test_pending_on_a_pod_with_no_gpu_limit_says_so() -> None:
    hint = kubernetes_pending_hint("ns", "x", {"containers": [{"name": "vllm"}]})
    assert hint.startswith("each vLLM pod asks for no GPU. ")
