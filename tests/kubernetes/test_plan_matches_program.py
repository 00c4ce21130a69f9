"""`vllm-stack plan` lists the Kubernetes objects the program really registers."""

from __future__ import annotations

from tests.conftest import shipped_stack
from tests.paths import stack_file
from vllm_serving.spec import resolve
from vllm_serving.stack_files.loader import load_settings, read_stack_file
from vllm_serving.views.kubernetes_plan import planned_kubernetes_resources


def test_plan_lists_the_registered_kubernetes_resources(program) -> None:
    run = program(shipped_stack("a100-k8s"), stack="a100-k8s")
    spec = resolve(load_settings(read_stack_file(stack_file("a100-k8s"))), "a100-k8s")
    assert run.applied() == sorted(planned_kubernetes_resources(spec))
