"""The Docker container as the engine gets it: which GPUs, how the weights are mounted, whether it
runs privileged, how long `docker wait` polls. Expected values from the stack files and by hand."""

from __future__ import annotations

from tests.stack_builders import make_spec
from vllm_serving.render.docker_container import Mount, container_spec
from vllm_serving.render.docker_run import docker_run_command


def test_the_gpus_the_stack_names_are_the_devices_asked_for() -> None:
    c = container_spec(make_spec("a100"))  # hardware.deviceIds: [6, 7, 8, 9]
    assert c.device_ids == ("6", "7", "8", "9")
    assert c.gpus == "device=6,7,8,9"
    everything = container_spec(make_spec("v100"))  # no deviceIds: every GPU of the host
    assert everything.device_ids is None and everything.gpus == "all"


def test_a_host_directory_of_weights_is_a_read_only_bind_mount() -> None:
    # Pulumi.v100.yaml: model.hostPath /u02/models/Qwen3.5-27B at containerPath /data/models/Qwen3.5-27B
    c = container_spec(make_spec("v100"))
    assert c.model_mount == Mount("bind", "/u02/models/Qwen3.5-27B", "/data/models/Qwen3.5-27B", read_only=True)


def test_privileged_reaches_the_container_only_when_asked() -> None:
    asked = container_spec(make_spec("v100", container={"privileged": True}))
    assert asked.privileged is True
    assert "--privileged" in docker_run_command(asked).split()
    assert container_spec(make_spec("v100")).privileged is False


def test_docker_waits_the_start_period_then_every_retry() -> None:
    spec = make_spec("a100")
    # By hand: a100 loads Qwen3.6-27B-FP8, a 780 s start period (tests/render/test_kubernetes_manifests.py
    # works it out); then 3 retries + 1 more, 30 s apart: 780 + 30 x 4 = 900 s.
    assert spec.startup_seconds == 780
    assert container_spec(spec).wait_timeout_seconds == 900
