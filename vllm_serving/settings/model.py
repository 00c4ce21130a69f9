"""`vllm-serving:model` and `vllm-serving:cache`: the weights and vLLM's compile cache."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.settings.base import Section, fix_error
from vllm_serving.settings.text_checks import absolute_path, check_text, volume_name

# What clients send as `model`: Hugging Face style ids (Qwen/Qwen3.5-27B) and plain names.
_SERVED_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:+@-]{0,254}")
# A config.json inside the project: relative, no `..` or hidden parts, so every checkout reads the same file.
CONFIG_FILE = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9._+-]*/)*[A-Za-z0-9_][A-Za-z0-9._+-]*\.json")


class ModelSettings(Section):
    """The model: what it is and where its weights are."""

    name: str | None = None
    """Catalog entry, e.g. `Qwen3.5-27B`; or give `architecture` inline."""
    architecture: ModelArchitecture | None = None
    """Architecture facts for a model not in the catalog (same keys as a catalog entry)."""
    config_file: str | None = Field(default=None, min_length=1)
    """The model's Hugging Face config.json, relative to the project directory, as its architecture."""
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
        return absolute_path(value, "path")

    @field_validator("volume_name")
    @classmethod
    def _volume(cls, value: str | None) -> str | None:
        return volume_name(value)

    @field_validator("config_file")
    @classmethod
    def _config_file(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return check_text(value, CONFIG_FILE, f"{value!r} is not a .json path inside the project",
                          "give the config.json's path relative to the project directory, "
                          "e.g. models/Qwen3-8B/config.json")

    @field_validator("served_name")
    @classmethod
    def _served_name(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return check_text(value, _SERVED_NAME, f"{value!r} is not a served model name",
                          "use letters, digits and . _ / : + @ - (no spaces), e.g. qwen3.5-27b")

    @model_validator(mode="after")
    def _one_of_each(self) -> ModelSettings:
        if sum(given is not None for given in (self.name, self.architecture, self.config_file)) != 1:
            raise fix_error("give exactly one of model.name, model.architecture and model.configFile",
                            "name a catalog model (e.g. Qwen3.5-27B; vllm-stack models lists them), point "
                            "configFile at the model's config.json, or describe it under architecture",
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
        return absolute_path(value, "cache path")

    @field_validator("volume_name")
    @classmethod
    def _volume(cls, value: str | None) -> str | None:
        return volume_name(value)

    @model_validator(mode="after")
    def _not_both(self) -> CacheSettings:
        if self.host_path is not None and self.volume_name is not None:
            raise fix_error("give one of cache.hostPath and cache.volumeName, not both",
                            "keep the one you want and remove the other", field="volumeName")
        return self


