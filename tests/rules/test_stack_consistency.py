"""stack_consistency.py at its boundaries: the GPU a node selector asks for, a start-up timeout
against the load time derived from the weights."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, findings

PRODUCT = "nvidia.com/gpu.product"
# v100's derived start-up budget by hand: Qwen3.5-27B in bf16 is ~27.5 B parameters (27 B text,
# 0.48 B vision) x 2 B ~= 51 GiB; 300 s + 15 s/GiB x 51 GiB = 1065 s, up to whole minutes: 1080 s
# (any checkpoint between 48 and 52 GiB gives the same 18 minutes).
V100_BUDGET = 1080
V100_FLOOR = V100_BUDGET // 2

BOUNDARIES = [
    Boundary("node-selector-other-gpu", "a100-k8s",
             {"kubernetes": {"node_selector": {PRODUCT: "Tesla-V100-SXM2-32GB"}}},
             {"kubernetes": {"node_selector": {PRODUCT: "NVIDIA-A100-SXM4-80GB"}}}, "V100 label -> A100 label",
             says=("V100-32GB nodes", "hardware.gpu is A100-80GB", "NVIDIA-A100-SXM4-80GB")),
    Boundary("node-selector-gpu-unverified", "a100-k8s",
             {"kubernetes": {"node_selector": {PRODUCT: "NVIDIA-A100-PCIE-80GB"}}},
             {"kubernetes": {"node_selector": {"pool": "gpu"}}}, "unknown product -> no product label"),
    Boundary("startup-timeout-short", "v100", {"container": {"startup_timeout": V100_FLOOR - 1}},
             {"container": {"startup_timeout": V100_FLOOR}}, "half the derived budget - 1 s -> half",
             says=(f"{V100_BUDGET} s", f"at least {V100_FLOOR} s")),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


def test_node_selector_is_not_checked_on_docker() -> None:
    found = findings("v100", {"kubernetes": {"node_selector": {PRODUCT: "NVIDIA-H200"}}})
    assert "node-selector-other-gpu" not in {f.code for f in found}
