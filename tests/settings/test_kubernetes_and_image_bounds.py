"""The edges of what the Kubernetes and image settings accept, from the systems that read them:
the API server's NodePort range, the taint GPU nodes carry, Docker's tag grammar."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from vllm_serving.settings.image import ImageSettings
from vllm_serving.settings.kubernetes import KubernetesSettings, ServiceSettings


@pytest.mark.parametrize(("node_port", "accepted"), [(29999, False), (30000, True), (32767, True), (32768, False)])
def test_a_node_port_is_in_the_api_servers_default_range(node_port: int, accepted: bool) -> None:
    # kube-apiserver --service-node-port-range defaults to 30000-32767
    given = {"type": "NodePort", "nodePort": node_port}
    if accepted:
        assert ServiceSettings.model_validate(given).node_port == node_port
    else:
        with pytest.raises(ValidationError):
            ServiceSettings.model_validate(given)


def test_the_pod_tolerates_the_taint_gpu_nodes_carry_by_default() -> None:
    # NVIDIA's GPU operator and the managed GPU node images taint nodes nvidia.com/gpu:NoSchedule
    (toleration,) = KubernetesSettings().tolerations
    assert (toleration.key, toleration.operator, toleration.effect) == ("nvidia.com/gpu", "Exists", "NoSchedule")


@pytest.mark.parametrize(("length", "accepted"), [(1, True), (128, True), (129, False)])
def test_a_tag_is_at_most_128_characters(length: int, accepted: bool) -> None:
    # distribution/reference regexp.go: tag = [\w][\w.-]{0,127}
    tag = "v" + "1" * (length - 1)
    if accepted:
        assert ImageSettings(repository="vllm/vllm-openai", tag=tag).tag == tag
    else:
        with pytest.raises(ValidationError):
            ImageSettings(repository="vllm/vllm-openai", tag=tag)
