"""The vLLM container on a Docker host, set the way the real provider applies it.

pulumi-docker's container update applies only restart policy and resource limits; every other
input change replaces the container, except a few it silently ignores (the healthcheck and the
wait timeout): those are listed in `replace_on_changes`, so a changed start period takes effect.
What the provider and the engine do after the first `pulumi up` is handled here
(docs/provider-behaviour.md, "Day 2"): a container that failed its health wait (`INIT_ERROR`), or
that a refresh found stopped (`mustRun`), is replaced by the next `pulumi up` and waited for again;
the log options dockerd merges in from daemon.json are ignored, and the stack's own ride on a label.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_docker as docker

from vllm_serving.render.docker_container import ContainerSpec, log_opts_label
from vllm_serving.timing import DOCKER_TIMEOUT_MARGIN_SECONDS, whole_minutes

# Inputs the provider's update neither applies nor marks as forcing a replacement.
IGNORED_BY_UPDATE = ("healthcheck", "waitTimeout", "wait", "destroyGraceSeconds")
# The engine's key for "the last create or update failed to initialise" (pulumi
# pkg/resource/deploy/step_generator.go `initErrorSpecialKey`; `applyReplaceOnChanges` turns it into a
# replacement when a replaceOnChanges path covers it). A server that failed its health wait is then
# replaced, and waited for again, by the next `pulumi up`; without it the engine sends an empty
# update, which the provider answers at once, and `pulumi up` succeeds on an unhealthy server.
INIT_ERROR = "#initerror"
# A refresh that finds the container stopped sets `must_run` false; the provider's update then only
# starts it, with no health wait (terraform-provider-docker resource_docker_container_funcs.go
# `resourceDockerContainerRead`, `resourceDockerContainerUpdate`): replaced instead, and waited for.
# That Read also empties `ports`, which replaces the server today; this keeps the replacement should
# a provider release stop emptying them.
RESTARTED_BY_UPDATE = "mustRun"
# Read back with daemon.json's additions (render/docker_container.py LOG_OPTS_LABEL): ignored whole.
DAEMON_MERGED = "logOpts"


def _envs(spec: ContainerSpec, secret_env: Mapping[str, pulumi.Output[str]]) -> pulumi.Input[list[str]]:
    """`K=V` list; secret values enter as secrets, which makes the whole list secret."""
    plain = [f"{k}={v}" for k, v in spec.env]
    secret = [pulumi.Output.concat(name, "=", secret_env[name]) for name in spec.secret_env]
    if not secret:
        return plain
    return pulumi.Output.all(*secret).apply(lambda values: plain + list(values))


# `gpus="device=6,7"` is CSV-split by the provider into Count 7 + DeviceIDs [6], which dockerd
# refuses: specific GPUs go through a device request, driver set explicitly (the provider's
# default driver is `cdi`). The preflight asks for the same GPUs through these two.
def gpus(spec: ContainerSpec) -> str | None:
    """The provider's `gpus`: `all`, or None with specific GPUs or none (a CPU target)."""
    return None if spec.device_ids else spec.gpus


def device_requests(spec: ContainerSpec) -> list[docker.ContainerDeviceRequestArgs] | None:
    """Specific GPUs as one NVIDIA device request."""
    if not spec.device_ids:
        return None
    return [docker.ContainerDeviceRequestArgs(driver="nvidia", device_ids=list(spec.device_ids), capabilities=["gpu"])]


class VllmServer(pulumi.ComponentResource):
    """One `docker.Container` running vLLM, replaced delete-first (fixed name and host port)."""

    container: docker.Container

    def __init__(
        self,
        name: str,
        spec: ContainerSpec,
        image: pulumi.Input[str],
        volumes: Sequence[docker.ContainerVolumeArgs],
        secret_env: Mapping[str, pulumi.Output[str]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("vllm-serving:docker:VllmServer", name, None, opts)
        missing = [n for n in spec.secret_env if n not in secret_env]
        if missing:
            raise ValueError(f"secret env without a value: {missing}")
        hc = spec.healthcheck
        timeout = whole_minutes(spec.wait_timeout_seconds + DOCKER_TIMEOUT_MARGIN_SECONDS)
        self.container = docker.Container(
            name,
            name=spec.name,
            image=image,
            command=list(spec.command),
            envs=_envs(spec, secret_env),
            gpus=gpus(spec),
            device_requests=device_requests(spec),
            runtime=spec.runtime,
            ipc_mode=spec.ipc_mode,
            shm_size=spec.shm_size_mb,  # MB, the provider's unit
            privileged=spec.privileged,
            security_opts=list(spec.security_opts),
            ports=[docker.ContainerPortArgs(
                internal=spec.container_port, external=spec.host_port,
                ip=spec.bind_address, protocol="tcp",
            )],
            volumes=list(volumes),
            healthcheck=docker.ContainerHealthcheckArgs(
                tests=list(hc.tests), interval=hc.interval, timeout=hc.timeout,
                start_period=hc.start_period, retries=hc.retries,
            ),
            restart=spec.restart,
            # vLLM drains on SIGTERM; without destroy_grace_seconds the provider stops with 0 s
            stop_signal=spec.stop_signal,
            stop_timeout=spec.stop_grace_seconds,
            destroy_grace_seconds=spec.stop_grace_seconds,
            must_run=True,
            wait=True,
            wait_timeout=spec.wait_timeout_seconds,
            log_driver=spec.log_driver,
            log_opts=dict(spec.log_opts),
            labels=[docker.ContainerLabelArgs(label=k, value=v) for k, v in (*spec.labels, log_opts_label(spec))],
            opts=pulumi.ResourceOptions(
                parent=self,
                # fixed container name and host port: the old container must go first
                delete_before_replace=True,
                custom_timeouts=pulumi.CustomTimeouts(create=timeout, update=timeout),
                replace_on_changes=[*IGNORED_BY_UPDATE, RESTARTED_BY_UPDATE, INIT_ERROR],
                ignore_changes=[DAEMON_MERGED],
                # a secret env value makes the list secret on the wire; keep it so in the state
                additional_secret_outputs=["envs"],
            ),
        )
        self.register_outputs({"containerName": self.container.name})
