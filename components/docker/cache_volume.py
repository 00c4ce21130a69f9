"""vLLM's compile cache at /root/.cache/vllm: writable, kept across container replacements."""

from __future__ import annotations

import pulumi

from components.docker.retained_volume import RetainedVolume
from vllm_serving.render.docker_container import Mount


class CacheVolume(RetainedVolume):
    def __init__(self, name: str, mount: Mount, opts: pulumi.ResourceOptions | None = None) -> None:
        if mount.read_only:
            raise ValueError("the compile cache must be writable")
        super().__init__("vllm-serving:docker:CacheVolume", name, mount, False, opts)
