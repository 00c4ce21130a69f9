"""The Docker-host deployment: provider, image, weights, cache and server from one spec."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_docker as docker

from components.docker.cache_volume import CacheVolume
from components.docker.model_volume import ModelVolume
from components.docker.preflight import Preflight
from components.docker.registry_image import RegistryImage
from components.docker.vllm_server import VllmServer
from vllm_serving.engine.flags import SECRET_ENV
from vllm_serving.preflight.command import docker_weights_source, preflight_command
from vllm_serving.render.docker_container import cache_mount, container_spec, model_mount, pull_timeout_seconds
from vllm_serving.render.docker_run import docker_run_command
from vllm_serving.render.rollout_hints import docker_logs_command, docker_never_healthy_hint
from vllm_serving.spec import ServingSpec


def docker_provider(
    name: str, spec: ServingSpec, registry_password: pulumi.Output[str] | None,
    opts: pulumi.ResourceOptions,
) -> docker.Provider:
    """The Docker host; registry credentials are used where `pulumi` runs, not on the host."""
    target, image = spec.settings.target, spec.settings.image
    auth = None
    if image.username and registry_password is not None:
        auth = [docker.ProviderRegistryAuthArgs(
            address=image.registry or "registry-1.docker.io",
            username=image.username,
            password=pulumi.Output.secret(registry_password),
        )]
    return docker.Provider(
        name,
        host=target.docker_host,
        ssh_opts=list(target.ssh_opts) or None,
        registry_auth=auth,
        opts=opts,
    )


class VllmDeployment(pulumi.ComponentResource):
    """Composes RegistryImage, ModelVolume, CacheVolume, Preflight and VllmServer; exposes the stack outputs."""

    outputs: dict[str, pulumi.Input[object]]

    def __init__(
        self,
        spec: ServingSpec,
        secrets: Mapping[str, pulumi.Output[str]],
        opts: pulumi.ResourceOptions | None = None,
        resource_name: str | None = None,
        server_after: Sequence[pulumi.Resource] = (),
    ) -> None:
        # a fleet host's deployment is named by its host (components/docker/fleet.py), and its
        # server waits for the previous host's
        name = resource_name or spec.name
        super().__init__("vllm-serving:docker:VllmDeployment", name, None, opts)
        provider = docker_provider(
            f"{name}-docker", spec, secrets.get("registryPassword"),
            pulumi.ResourceOptions(parent=self),
        )
        child = pulumi.ResourceOptions(parent=self, providers={"docker": provider})
        image = RegistryImage(f"{name}-image", spec.settings.image.reference, pull_timeout_seconds(spec), child)
        weights = ModelVolume(f"{name}-model", model_mount(spec), spec.settings.model.protect, child)
        cache_spec = cache_mount(spec)
        cache = CacheVolume(f"{name}-cache", cache_spec, child) if cache_spec else None
        container = container_spec(spec)
        secret_env = {env: secrets[key] for key, env in SECRET_ENV.items() if env in spec.secret_env}
        # the server's image passes the preflight first: a failed one stops here, the server untouched
        preflight = preflight_command(spec, "docker", docker_weights_source(spec))
        target = spec.settings.target
        server_image = (Preflight(f"{name}-preflight", preflight, container, image.image_id,
                                  weights.container_volume(), child, target.docker_host,
                                  tuple(target.ssh_opts or ())).server_image()
                        if preflight else image.image_id)
        server = VllmServer(
            f"{name}-server", container, server_image,
            [v.container_volume() for v in (weights, cache) if v is not None],
            secret_env,
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=list(server_after)))
            if server_after else child,
        )
        self.server = server
        # the provider's health timeout names neither the start period nor where the logs are
        docker_host = spec.settings.target.docker_host
        pulumi.log.info(docker_never_healthy_hint(container, docker_host), resource=server.container)
        self.outputs = {
            **spec.endpoints(),
            "servedModelName": spec.served_model_name,
            "imageDigest": image.repo_digest,
            "vllmArgs": list(spec.args),
            "dockerRunCommand": docker_run_command(container),
            "containerName": server.container.name,
            "logsCommand": docker_logs_command(container, docker_host),
        }
        self.register_outputs(self.outputs)

