"""The model weights: hours to copy, so always read-only and never deleted."""

from __future__ import annotations

import pulumi

from components.docker.retained_volume import RetainedVolume
from vllm_serving.render.docker_container import Mount


class ModelVolume(RetainedVolume):
    def __init__(
        self, name: str, mount: Mount, protect: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        if not mount.read_only:
            raise ValueError("model weights are always mounted read-only")
        super().__init__("vllm-serving:docker:ModelVolume", name, mount, protect, opts)
