"""The rendered manifests read back as exactly the objects, with no YAML anchors (kubectl users
read them; an `&id001` shared between two containers hides what each gets)."""

from __future__ import annotations

import pytest
import yaml

from tests.stack_builders import make_spec
from vllm_serving.render.kubernetes.objects import kubernetes_objects, manifests_yaml


@pytest.mark.parametrize("stack", ["a100-k8s", "v100", "a100"])
def test_manifests_round_trip_without_anchors(stack: str) -> None:
    objects = kubernetes_objects(make_spec(stack))
    text = manifests_yaml(objects)
    assert "&id" not in text and "*id" not in text
    assert list(yaml.safe_load_all(text)) == objects


def test_multi_line_scripts_read_as_literal_blocks() -> None:
    text = manifests_yaml(kubernetes_objects(make_spec("a100-k8s")))
    assert "- |\n" in text  # the preflight script, line by line
