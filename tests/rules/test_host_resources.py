"""host_resources.py at its boundaries: free GPU memory at start, the Docker runtime, the host port."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, gpu

# A100-80GB: CUDA total 79.25 GiB (the catalog's measured figure); at most 78.85 GiB is ever free
BOUNDARIES = [
    Boundary("gpu-memory-utilization-unsatisfiable", "a100", {"engine": {"gpu_memory_utilization": 1.0}},
             {"engine": {"gpu_memory_utilization": 0.99}}, "1.0 -> 0.99", says=("0.99 or lower",)),
    Boundary("gpu-memory-utilization-unsatisfiable", "v100", {"engine": {"gpu_memory_utilization": 0.99},
                                                              "gpu": gpu("16G", (7, 0), 16384)},
             {"engine": {"gpu_memory_utilization": 0.97}, "gpu": gpu("16G", (7, 0), 16384)},
             "a 16 GiB card (15.76 GiB to CUDA): 0.99 -> 0.97"),
    Boundary("container-runtime-unknown", "v100", {"container": {"runtime": "nvida"}},
             {"container": {"runtime": "nvidia"}}, "nvida -> nvidia", says=("did you mean nvidia?",)),
    Boundary("container-runtime-unknown", "v100", {"container": {"runtime": "nvidia-docker"}},
             {"container": {"runtime": "nvidia-cdi"}}, "nvidia-docker (the old wrapper) -> nvidia-cdi"),
    Boundary("host-port-in-use", "v100",
             {"target": {"docker_host": "ssh://deploy@gpu01"}, "network": {"host_port": 22}},
             {"target": {"docker_host": "ssh://deploy@gpu01:2222"}, "network": {"host_port": 22}},
             "hostPort 22: ssh on 22 -> ssh on 2222"),
    Boundary("host-port-in-use", "v100", {"target": {"docker_host": "ssh://deploy@gpu01:2222"},
                                          "network": {"host_port": 2222}},
             {"target": {"docker_host": "ssh://deploy@gpu01:2222"}, "network": {"host_port": 8000}},
             "ssh on 2222: hostPort 2222 -> 8000", says=("gpu01",)),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)
