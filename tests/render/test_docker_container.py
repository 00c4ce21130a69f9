"""The Docker container as the engine gets it: which GPUs, how the weights are mounted, whether it
runs privileged, how long `docker wait` polls. Expected values from the stack files and by hand."""

from __future__ import annotations

from tests.stack_builders import make_spec
from vllm_serving.render.docker_container import (
    Mount,
    cache_mount,
    container_spec,
    log_opts_label,
    pull_timeout_seconds,
)
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


def test_the_image_pull_may_take_what_the_stack_says_else_what_its_size_needs() -> None:
    # timing.py: two minutes to start, then 10 MiB/s, in whole minutes. vLLM's CUDA image, ~20 GiB:
    # 120 s + 20 x 1024 / 10 = 2168 s -> 37 min; the CPU image (Pulumi.local.yaml), ~4 GiB: 529.6 s -> 9 min
    assert pull_timeout_seconds(make_spec("v100")) == 37 * 60
    assert pull_timeout_seconds(make_spec("local")) == 9 * 60
    given = make_spec("v100", image={"repository": "vllm/vllm-openai", "tag": "v0.19.1", "pullTimeout": "90m"})
    assert pull_timeout_seconds(given) == 90 * 60


def test_the_log_options_label_says_what_the_server_was_given() -> None:
    # the provider reads daemon.json's additions back into log_opts; the label keeps what was asked
    # (Pulumi.v100.yaml leaves container.logMaxFiles and logMaxSize at 3 and 100m)
    assert log_opts_label(container_spec(make_spec("v100"))) == ("vllm-serving.log-opts", "max-file=3,max-size=100m")
    tuned = container_spec(make_spec("v100", container={"logMaxFiles": 5, "logMaxSize": "1g"}))
    assert log_opts_label(tuned) == ("vllm-serving.log-opts", "max-file=5,max-size=1g")


def test_the_compile_cache_is_a_writable_bind_mount_or_named_volume() -> None:
    # Pulumi.v100.yaml: cache.hostPath /u02/models/data/vllm-cache; Pulumi.a100.yaml: volumeName vllm-cache;
    # vLLM's cache directory in the container is /root/.cache/vllm (envs.py VLLM_CACHE_ROOT)
    assert cache_mount(make_spec("v100")) == Mount("bind", "/u02/models/data/vllm-cache", "/root/.cache/vllm",
                                                   read_only=False)
    assert cache_mount(make_spec("a100")) == Mount("volume", "vllm-cache", "/root/.cache/vllm", read_only=False)
    assert cache_mount(make_spec("v100", cache={"enabled": False})) is None
    for stack in ("v100", "a100"):
        mount = cache_mount(make_spec(stack))
        assert mount is not None and mount.read_only is False


def test_shared_memory_is_sized_only_in_the_containers_own_ipc_namespace() -> None:
    # with the host's IPC namespace Docker refuses --shm-size (it is the host's /dev/shm); 8g = 8192 MiB
    host = container_spec(make_spec("v100", container={"ipcMode": "host", "shmSize": "8g"}))
    own = container_spec(make_spec("v100", container={"ipcMode": "private", "shmSize": "8g"}))
    assert (host.shm_size_mb, own.shm_size_mb) == (None, 8192)


def test_a_privileged_server_states_selinux_off_as_the_daemon_would() -> None:
    # moby's daemon adds label=disable for a privileged container (or host IPC) on an SELinux host
    privileged = container_spec(make_spec("v100", container={"ipcMode": "private", "privileged": True}))
    plain = container_spec(make_spec("v100", container={"ipcMode": "private"}))
    assert privileged.security_opts == ("no-new-privileges=true", "label=disable")
    assert plain.security_opts == ("no-new-privileges=true",)


def test_a_cpu_tag_of_the_cuda_repository_pulls_as_the_cpu_image() -> None:
    # `-cpu` tags: vLLM's CPU build, ~4 GiB: 9 minutes (see above)
    cpu = make_spec("v100", image={"repository": "vllm/vllm-openai", "tag": "v0.19.1-cpu"})
    assert pull_timeout_seconds(cpu) == 9 * 60
