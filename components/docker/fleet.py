"""A Docker fleet: the stack's server on every host of `target.hosts`, one host at a time.

Each host gets its own provider and `VllmDeployment` from its own spec (vllm_serving/fleet.py),
named by the host's id, never by its position in the list: removing a host deletes only that
host's resources, adding one registers only its own, and the others keep their URNs.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi

from components.docker.vllm_deployment import VllmDeployment
from vllm_serving.fleet import HostSpec, host_resource_name
from vllm_serving.spec import ServingSpec

# Per-host outputs, under the host's id in the `hosts` output.
HOST_OUTPUTS = ("baseUrl", "healthUrl", "modelsUrl", "metricsUrl", "containerName", "logsCommand",
                "imageDigest", "dockerRunCommand")


class VllmFleet(pulumi.ComponentResource):
    """One VllmDeployment per host, the servers chained so `pulumi up` replaces them in turn."""

    outputs: dict[str, pulumi.Input[object]]

    def __init__(
        self,
        spec: ServingSpec,
        hosts: tuple[HostSpec, ...],
        secrets: Mapping[str, pulumi.Output[str]],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("vllm-serving:docker:VllmFleet", spec.name, None, opts)
        deployments: dict[str, VllmDeployment] = {}
        previous: list[pulumi.Resource] = []
        for host in hosts:
            # Each host's server depends on the previous host's server container. Pulumi walks
            # dependencies: it registers (and so creates or replaces) a resource only after the
            # ones it depends on have finished, and a server container finishes only once its
            # /health check passes (`wait`). So `pulumi up` replaces the servers one after the
            # other, in list order, each after the previous one serves again: the fleet never
            # loses all its capacity at once. Only the servers wait; providers, image pulls,
            # volumes and preflights of every host proceed in parallel.
            # The edge must stay `depends_on`, never an input taken from the previous server (nor
            # `replace_with`/`deleted_with`): a server is replaced delete-first, and the engine then
            # deletes first every dependent whose INPUTS come from it (pulumi
            # pkg/resource/deploy/step_generator.go `calculateDependentReplacements` follows property
            # dependencies only), which would take every later host down at once. Details:
            # docs/provider-behaviour.md.
            deployment = VllmDeployment(
                host.spec, secrets, pulumi.ResourceOptions(parent=self),
                resource_name=host_resource_name(spec, host), server_after=previous,
            )
            previous = [deployment.server.container]
            deployments[host.id] = deployment
        first = next(iter(deployments.values()))
        self.outputs = {
            # what every host serves alike
            "servedModelName": spec.served_model_name,
            "vllmArgs": list(spec.args),
            # every host pulls the same reference; the first host's digest is the release's
            "imageDigest": first.outputs["imageDigest"],
            "hosts": {host_id: {key: d.outputs[key] for key in HOST_OUTPUTS}
                      for host_id, d in deployments.items()},
            # what a load balancer balances over, in target.hosts order
            "endpoints": [d.outputs["baseUrl"] for d in deployments.values()],
        }
        self.register_outputs(self.outputs)
