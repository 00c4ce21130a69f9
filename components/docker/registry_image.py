"""The vLLM image, pulled through the provider that carries the registry credentials."""

from __future__ import annotations

import pulumi
import pulumi_docker as docker

from vllm_serving.timing import whole_minutes


class RegistryImage(pulumi.ComponentResource):
    """`docker pull` of one pinned reference; the 20 GB image stays on the host (`keep_locally`)."""

    image_id: pulumi.Output[str]
    repo_digest: pulumi.Output[str]

    def __init__(
        self, name: str, reference: str, pull_timeout_seconds: int, opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("vllm-serving:docker:RegistryImage", name, None, opts)
        image = docker.RemoteImage(
            name,
            name=reference,
            # keep it on replace/destroy: a re-pull of ~20 GB over an internal link takes long
            keep_locally=True,
            # the pull happens here, not in the container: a ~20 GB image outlasts the
            # provider's 20-minute default
            opts=pulumi.ResourceOptions(parent=self, custom_timeouts=pulumi.CustomTimeouts(
                create=whole_minutes(pull_timeout_seconds), update=whole_minutes(pull_timeout_seconds))),
        )
        self.image_id = image.image_id
        self.repo_digest = image.repo_digest
        self.register_outputs({"imageId": self.image_id, "repoDigest": self.repo_digest})
