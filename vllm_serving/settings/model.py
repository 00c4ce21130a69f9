"""`vllm-serving:model` and `vllm-serving:cache`: the weights and vLLM's compile cache."""

from __future__ import annotations

from pydantic import field_validator, model_validator

from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.settings.base import Section, check_path, check_volume, fix_error


class ModelSettings(Section):
    """The model: what it is and where its weights are."""

    name: str | None = None
    """Catalog entry, e.g. `Qwen3.5-27B`; or give `architecture` inline."""
    architecture: ModelArchitecture | None = None
    """Architecture facts for a model not in the catalog (same keys as a catalog entry)."""
    host_path: str | None = None
    """Directory of the weights on the host (bind-mounted read-only)."""
    volume_name: str | None = None
    """Existing named Docker volume holding the weights, instead of `hostPath`."""
    container_path: str | None = None
    """Where the weights appear in the container; `/models/<directory name>` when absent."""
    served_name: str | None = None
    """Name clients put in `model`; vLLM uses the container path when absent."""
    protect: bool = False
    """Also `protect` a named weights volume, so even an explicit delete is refused."""

    @field_validator("host_path", "container_path")
    @classmethod
    def _paths(cls, value: str | None) -> str | None:
        return check_path(value, "path")

    @field_validator("volume_name")
    @classmethod
    def _volume(cls, value: str | None) -> str | None:
        return check_volume(value)

    @model_validator(mode="after")
    def _one_of_each(self) -> ModelSettings:
        if (self.name is None) == (self.architecture is None):
            raise fix_error("give exactly one of model.name and model.architecture",
                            "name a catalog model (e.g. Qwen3.5-27B) or describe it under architecture",
                            field="name")
        if (self.host_path is None) == (self.volume_name is None):
            raise fix_error("give exactly one of model.hostPath and model.volumeName",
                            "set hostPath to the weights directory, e.g. /data/models/Qwen3.5-27B",
                            field="hostPath")
        if self.container_path is None and self.host_path is None:
            raise fix_error("a volume needs an explicit container path",
                            "set model.containerPath, e.g. /models/Qwen3.5-27B", field="containerPath")
        return self

    @property
    def mount_path(self) -> str:
        """Path of the weights inside the container."""
        if self.container_path:
            return self.container_path
        assert self.host_path is not None  # guaranteed by _one_of_each
        return "/models/" + self.host_path.rstrip("/").rsplit("/", 1)[-1]


class CacheSettings(Section):
    """vLLM's compile cache (`/root/.cache/vllm`), kept so restarts skip torch.compile."""

    enabled: bool = True
    """Mount a persistent cache; turning it off makes every restart recompile."""
    host_path: str | None = None
    """Host directory for the cache."""
    volume_name: str | None = None
    """Named Docker volume for the cache; `<container name>-cache` when neither is given."""

    @field_validator("host_path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return check_path(value, "cache path")

    @field_validator("volume_name")
    @classmethod
    def _volume(cls, value: str | None) -> str | None:
        return check_volume(value)

    @model_validator(mode="after")
    def _not_both(self) -> CacheSettings:
        if self.host_path is not None and self.volume_name is not None:
            raise fix_error("give one of cache.hostPath and cache.volumeName, not both",
                            "keep the one you want and remove the other", field="volumeName")
        return self


