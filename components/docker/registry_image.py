"""The vLLM image, pulled through the provider that carries the registry credentials."""

from __future__ import annotations

import pulumi
import pulumi_docker as docker


class RegistryImage(pulumi.ComponentResource):
    """`docker pull` of one pinned reference; the 20 GB image stays on the host (`keep_locally`)."""

    image_id: pulumi.Output[str]
    repo_digest: pulumi.Output[str]

    def __init__(self, name: str, reference: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("vllm-serving:docker:RegistryImage", name, None, opts)
        image = docker.RemoteImage(
            name,
            name=reference,
            # keep it on replace/destroy: a re-pull of ~20 GB over an internal link takes long
            keep_locally=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.image_id = image.image_id
        self.repo_digest = image.repo_digest
        self.register_outputs({"imageId": self.image_id, "repoDigest": self.repo_digest})
