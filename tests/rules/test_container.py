"""container.py at its boundaries: privileges, /dev/shm, credentials, exposure, backend keys."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary
from vllm_serving.units import GIB

PRIVATE = {"ipc_mode": "private", "shm_size": None}
TWO_GPUS = {"engine": {"tensor_parallel_size": 2}, "hardware": {"device_ids": (6, 7)}}

BOUNDARIES = [
    Boundary("container-privileged", "v100", {"container": {"privileged": True}}, {"container": {"privileged": False}},
             "privileged -> not"),
    Boundary("shm-too-small", "a100", {"container": {"shm_size": 4 * GIB - 1}}, {"container": {"shm_size": 4 * GIB}},
             "4 GPUs: 4 GiB - 1 byte -> 4 GiB", says=("4g",)),
    Boundary("shm-too-small", "a100", {"container": {"shm_size": 2 * GIB}},
             {"container": {"shm_size": 2 * GIB}, "engine": {"tensor_parallel_size": 1},
              "hardware": {"device_ids": (6,)}}, "2 GiB: 4 GPUs -> 1"),
    Boundary("shm-too-small", "a100", {"container": {"shm_size": 2 * GIB - 1}, **TWO_GPUS},
             {"container": {"shm_size": 2 * GIB}, **TWO_GPUS},
             "2 GPUs: 2 GiB - 1 byte -> 2 GiB"),
    Boundary("shm-too-small", "a100", {"container": {"shm_size": 2 * GIB}}, {"container": {"shm_size": 4 * GIB}},
             "2 GiB -> 4 GiB", says=("2048 MiB",)),
    Boundary("shm-too-small", "a100-k8s", {"target": {"kind": "docker"}, "container": PRIVATE}, {"container": PRIVATE},
             "Docker -> Kubernetes (a pod's own /dev/shm)"),
    Boundary("shm-too-small", "a100", {"container": {"shm_size": None}},
             {"container": {"shm_size": None, "ipc_mode": "host"}}, "Docker's 64 MiB: private -> host IPC"),
    Boundary("shm-size-ignored", "v100", {"container": {"shm_size": 128 * GIB}},
             {"container": {"shm_size": 128 * GIB, "ipc_mode": "private"}},
             "shmSize 128g: ipcMode host -> private", says=("131072 MiB", "ipcMode: host")),
    Boundary("shm-size-ignored", "a100", {"container": {"ipc_mode": "host"}},
             {"container": {"ipc_mode": "host"}, "target": {"kind": "kubernetes"}},
             "ipc host + shmSize 32g: Docker -> Kubernetes (the pod's own /dev/shm)"),
    Boundary("registry-password-missing", "v100", {}, {"secrets_set": frozenset({"registryPassword"})},
             "no registryPassword -> set"),
    Boundary("registry-password-missing", "v100", {"image": {"registry": None}},
             {"image": {"registry": None}, "secrets_set": frozenset({"registryPassword"})},
             "Docker Hub: no registryPassword -> set", says=("for Docker Hub",)),
    Boundary("registry-user-missing", "v100",
             {"image": {"username": None}, "secrets_set": frozenset({"registryPassword"})},
             {"secrets_set": frozenset({"registryPassword"})}, "registryPassword without a user -> with one",
             says=("192.168.122.156:30000 is pulled from without logging in", "set image.username")),
    Boundary("registry-user-missing", "a100-k8s",
             {"image": {"username": None, "registry": None}, "secrets_set": frozenset({"registryPassword"})},
             {"image": {"username": None, "registry": None}}, "no user: registryPassword set -> not",
             says=("Docker Hub is pulled from", "pulumi config rm registryPassword")),
    Boundary("docker-keys-on-kubernetes", "a100-k8s", {"hardware": {"device_ids": (0, 1, 2, 3)}}, {},
             "deviceIds set -> unset", says=("hardware.deviceIds",)),
    Boundary("docker-keys-on-kubernetes", "a100-k8s",
             {"hardware": {"device_ids": (0, 1, 2, 3)}, "container": {"runtime": "nvidia"}}, {},
             "deviceIds and runtime set -> unset", says=("hardware.deviceIds, container.runtime only apply",)),
    # a Service's address is the cluster's: network.publicHost names a Docker host's (render/docker_run)
    Boundary("docker-keys-on-kubernetes", "a100-k8s", {"network": {"public_host": "gpu-7.internal"}}, {},
             "publicHost set -> unset", says=("network.publicHost",)),
    Boundary("docker-keys-on-kubernetes", "a100-k8s", {"network": {"host_port": 30006}}, {},
             "hostPort set -> unset", says=("network.hostPort",)),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)
