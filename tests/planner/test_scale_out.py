"""The planner's view of scale-out: one engine's plan, multiplied by data-parallel ranks and replicas."""

from __future__ import annotations

from tests.kubernetes.multi_node_stacks import two_node_spec
from tests.stack_builders import edit, shipped_settings, spec_of
from vllm_serving.planner.capacity import plan_capacity
from vllm_serving.planner.scale_out import scale_out, scale_out_view
from vllm_serving.render.kubernetes.objects import render_objects
from vllm_serving.views.plan import deployment_plan


def test_each_data_parallel_rank_holds_the_weights_and_its_own_cache() -> None:
    """A DP rank is a whole engine: its GPUs carry the same share as without DP."""
    one = plan_capacity(spec_of(shipped_settings("a100-k8s")))
    settings = edit(shipped_settings("a100-k8s"), engine={"tensor_parallel_size": 4, "data_parallel_size": 2})
    two = plan_capacity(spec_of(settings))
    assert two.weights_gib_per_gpu == one.weights_gib_per_gpu
    assert two.kv_cache_tokens == one.kv_cache_tokens
    view = scale_out_view(scale_out(settings), two)
    assert (view["gpus"], view["gpusPerEngine"], view["engines"]) == (8, 4, 2)
    assert view["kvCacheTokensTotal"] == 2 * two.kv_cache_tokens
    assert view["maxConcurrencyTotal"] == round(2 * two.max_concurrency, 2)
    assert "2 data-parallel engines per server" in str(view["note"])


def test_data_parallel_size_reaches_argv_and_gpu_limit() -> None:
    spec = spec_of(edit(shipped_settings("a100-k8s"), engine={"tensor_parallel_size": 2, "data_parallel_size": 4}))
    assert spec.args[spec.args.index("--data-parallel-size") + 1] == "4"
    deployment = render_objects(spec).deployment or {}
    limits = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits["nvidia.com/gpu"] == "8"


def test_replicas_and_ranks_multiply() -> None:
    settings = edit(shipped_settings("a100-k8s"), engine={"tensor_parallel_size": 2, "data_parallel_size": 2},
                    kubernetes={"replicas": 3})
    layout = scale_out(settings)
    assert (layout.engines, layout.pods, layout.total_gpus, layout.pod_gpus) == (6, 3, 12, 4)
    note = str(scale_out_view(layout, plan_capacity(spec_of(settings)))["note"])
    assert note.startswith("6 engines (3 replicas x 2 data-parallel engines per server)")


def test_replicas_and_nodes_count_only_on_kubernetes() -> None:
    docker = edit(shipped_settings("a100"), kubernetes={"replicas": 3, "nodes": 2})
    assert not scale_out(docker).scaled and scale_out(docker).total_gpus == 4


def test_one_engine_over_two_nodes() -> None:
    spec = two_node_spec()
    layout = scale_out(spec.settings)
    assert (layout.engine_gpus, layout.pod_gpus, layout.pods, layout.engines) == (16, 8, 2, 1)
    assert "note" not in scale_out_view(layout, plan_capacity(spec))  # one KV cache


def test_the_plan_shows_scale_out_only_when_there_is_some() -> None:
    assert "scaleOut" not in deployment_plan(spec_of(shipped_settings("a100-k8s")), [])
    plan = deployment_plan(two_node_spec(), [])
    assert plan["scaleOut"]["nodesPerReplica"] == 2
    assert plan["gpu"]["given"] == "8 x nvidia.com/gpu per pod"
