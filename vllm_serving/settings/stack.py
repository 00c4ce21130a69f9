"""A whole stack: every section, plus which secrets are set (never their values)."""

from __future__ import annotations

from pydantic import Field

from vllm_serving.settings.base import Section
from vllm_serving.settings.capacity import CapacitySettings
from vllm_serving.settings.container import ContainerSettings, NetworkSettings
from vllm_serving.settings.engine import EngineSettings
from vllm_serving.settings.hardware import HardwareSettings
from vllm_serving.settings.image import ImageSettings
from vllm_serving.settings.kubernetes import KubernetesSettings
from vllm_serving.settings.model import CacheSettings, ModelSettings
from vllm_serving.settings.observability import ObservabilitySettings
from vllm_serving.settings.preflight import PreflightSettings
from vllm_serving.settings.release import ReleaseSettings
from vllm_serving.settings.target import TargetSettings
from vllm_serving.settings.waivers import Waivers

SECRET_KEYS = ("registryPassword", "apiKey", "hfToken")
"""Top-level config keys that must be Pulumi secrets (`pulumi config set --secret`)."""


class StackSettings(Section):
    """A whole stack: every section, plus which secrets are set (never their values)."""

    target: TargetSettings = Field(default_factory=TargetSettings)
    """Where it runs."""
    hardware: HardwareSettings
    """The GPUs."""
    image: ImageSettings
    """The vLLM image."""
    model: ModelSettings
    """The model and its weights."""
    cache: CacheSettings = Field(default_factory=CacheSettings)
    """The compile cache."""
    engine: EngineSettings = Field(default_factory=EngineSettings)
    """vLLM engine flags."""
    container: ContainerSettings = Field(default_factory=ContainerSettings)
    """The container."""
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    """Ports and addresses."""
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings)
    """Cluster settings, used when target.kind is kubernetes."""
    release: ReleaseSettings = Field(default_factory=ReleaseSettings)
    """Where the release comes from: this stack's own sections, or another stack (promotion)."""
    preflight: PreflightSettings = Field(default_factory=PreflightSettings)
    """The checks run with the new image before it replaces the server."""
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)
    """Metrics scraping, alerts and the Grafana dashboard."""
    waivers: Waivers = ()
    """Findings this stack sets aside on purpose, each `{code, reason}` and optionally `key` (docs/rules.md)."""
    capacity: CapacitySettings = Field(default_factory=CapacitySettings)
    """What the KV cache must hold (capacity.minConcurrency), checked at preview and by smoke."""
    secrets_set: frozenset[str] = frozenset()
    """Names of the secret keys present in the stack (values stay with Pulumi)."""

    @property
    def cache_volume_name(self) -> str | None:
        """Named volume for the cache, when the cache is not a host path."""
        if not self.cache.enabled or self.cache.host_path:
            return None
        return self.cache.volume_name or f"{self.container.name}-cache"


SECTIONS: tuple[str, ...] = tuple(
    name for name in StackSettings.model_fields if name != "secrets_set"
)

