"""multi_node.py at its boundaries, and data parallelism in the GPU-count rules of parallelism.py."""

from __future__ import annotations

from typing import Any

import pytest

from tests.rules.boundary import Boundary, check_boundary
from vllm_serving.settings.kubernetes import CacheClaim, RdmaSettings

# a100-k8s (8 x A100-80GB per node, Qwen3.6-27B-FP8) as one server over two nodes: TP 8 x PP 2
SHARED_CACHE = CacheClaim(access_mode="ReadWriteMany")


def two_nodes(tp: int = 8, pp: int = 2, nodes: int = 2, **sections: dict[str, Any]) -> dict[str, Any]:
    engine = {"tensor_parallel_size": tp, "pipeline_parallel_size": pp, **sections.pop("engine", {})}
    kubernetes = {"nodes": nodes, "cache": SHARED_CACHE, **sections.pop("kubernetes", {})}
    return {"engine": engine, "kubernetes": kubernetes, **sections}


BOUNDARIES = [
    Boundary("multi-node-on-docker", "a100", {"kubernetes": {"nodes": 2}}, {"kubernetes": {"nodes": 1}},
             "Docker: nodes 2 -> 1", says=("target.kind: kubernetes",)),
    Boundary("multi-node-release-unsupported", "a100-k8s", two_nodes(image={"tag": "v0.11.0"}),
             two_nodes(image={"tag": "v0.17.1"}), "v0.11.0 (no --nnodes) -> v0.17.1 (the first release with it)",
             says=("v0.11.0 has no --nnodes", "v0.17.1 or newer")),
    Boundary("multi-node-tp-across-nodes", "a100-k8s", two_nodes(tp=16, pp=1), two_nodes(tp=8, pp=2),
             "TP 16 x PP 1 -> TP 8 x PP 2 over 2 nodes of 8",
             fix="keep TP within a node and span the nodes with pipeline stages: tensorParallelSize 8, "
                 "pipelineParallelSize 2"),
    Boundary("multi-node-indivisible", "a100-k8s", two_nodes(nodes=3), two_nodes(nodes=2), "16 GPUs: 3 nodes -> 2",
             says=("16 GPUs cannot be split evenly over 3 nodes",)),
    Boundary("multi-node-gpus-mismatch", "a100-k8s", two_nodes(tp=4, pp=2), two_nodes(tp=8, pp=2),
             "8 GPUs over 2 nodes of 8 -> 16", fix="set kubernetes.nodes: 1 (the model fits one node)"),
    Boundary("multi-node-gpus-mismatch", "a100-k8s", two_nodes(nodes=4), two_nodes(nodes=2),
             "16 GPUs over 4 nodes -> 2", says=("4 per node",), fix="set kubernetes.nodes: 2"),
    Boundary("multi-node-gpus-mismatch", "a100-k8s", two_nodes(tp=4, pp=3), two_nodes(tp=4, pp=4),
             "TP 4 x PP 3 = 12 over 2 nodes of 8 -> PP 4", fix="set engine.pipelineParallelSize: 4"),
    # 12 GPUs, 6 per node on nodes of 8: no node count fills them, and TP 6 divides no whole number of nodes
    Boundary("multi-node-gpus-mismatch", "a100-k8s", two_nodes(tp=6, pp=2), two_nodes(tp=8, pp=2),
             "TP 6 x PP 2 = 12 over 2 nodes of 8 -> TP 8", fix="make TP x PP a multiple of hardware.count"),
    Boundary("multi-node-data-parallel", "a100-k8s", two_nodes(engine={"data_parallel_size": 2}),
             two_nodes(engine={"data_parallel_size": 1}), "over 2 nodes: DP 2 -> 1",
             says=("kubernetes.replicas",)),
    Boundary("multi-node-launcher-in-extra-args", "a100-k8s", two_nodes(engine={"extra_args": ("--nnodes", "3")}),
             two_nodes(engine={"extra_args": ("--enforce-eager",)}), "extraArgs --nnodes 3 -> --enforce-eager",
             says=("--nnodes",)),
    Boundary("multi-node-launcher-in-extra-args", "a100-k8s", two_nodes(engine={"extra_args": ("--headl",)}),
             two_nodes(), "extraArgs --headl (argparse's prefix of --headless) -> none", says=("--headl",)),
    Boundary("multi-node-env-conflict", "a100-k8s", two_nodes(engine={"env": {"VLLM_HOST_IP": "10.0.0.1"}}),
             two_nodes(engine={"env": {"VLLM_LOGGING_LEVEL": "INFO"}}), "engine.env VLLM_HOST_IP -> another",
             says=("VLLM_HOST_IP",)),
    Boundary("multi-node-env-conflict", "a100-k8s",
             two_nodes(engine={"env": {"NCCL_IB_HCA": "mlx5"}},
                       kubernetes={"rdma": RdmaSettings(nccl_env={"NCCL_IB_HCA": "mlx5_0"})}),
             two_nodes(kubernetes={"rdma": RdmaSettings(nccl_env={"NCCL_IB_HCA": "mlx5_0"})}),
             "NCCL_IB_HCA in engine.env and rdma.ncclEnv -> only the latter", says=("NCCL_IB_HCA",)),
    Boundary("multi-node-name-too-long", "a100-k8s", two_nodes(container={"name": "v" * 54}),
             two_nodes(container={"name": "v" * 53}), "pod name 64 -> 63 characters",
             says=("at most 53 characters",)),
    Boundary("multi-node-no-gpu-selector", "a100-k8s", two_nodes(kubernetes={"node_selector": {}}),
             two_nodes(kubernetes={"node_selector": None}), "nodeSelector {} -> the GPU's label",
             says=("NVIDIA-A100-SXM4-80GB",)),
]

# data parallelism counts in the GPUs a server needs (parallelism.py)
DATA_PARALLEL = [
    Boundary("parallel-exceeds-host", "a100-k8s", {"engine": {"data_parallel_size": 4}},
             {"engine": {"data_parallel_size": 2}}, "8 GPUs: TP 4 x DP 4 -> DP 2",
             says=("TP 4 x PP 1 x DP 4 needs 16 GPUs",)),
    Boundary("parallel-exceeds-gpus", "a100", {"engine": {"tensor_parallel_size": 4, "data_parallel_size": 2}},
             {"engine": {"tensor_parallel_size": 2, "data_parallel_size": 2}}, "4 GPUs given: TP 4 x DP 2 -> TP 2",
             says=("x DP 2 needs 8 GPUs",)),
    Boundary("parallel-gpus-idle", "a100", {"engine": {"tensor_parallel_size": 2}},
             {"engine": {"tensor_parallel_size": 2, "data_parallel_size": 2}}, "4 GPUs given: TP 2 -> TP 2 x DP 2"),
    Boundary("parallel-exceeds-host", "a100-k8s", two_nodes(kubernetes={"nodes": 1}), two_nodes(),
             "16 GPUs: one node -> two (the multi-node rules check the split)"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=lambda c: c.id)
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


@pytest.mark.parametrize("case", DATA_PARALLEL, ids=lambda c: c.id)
def test_data_parallel_counts_in_the_gpus(case: Boundary) -> None:
    check_boundary(case)
