"""`vllm-serving:hardware`: the GPUs of the host."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from vllm_serving.catalog.gpus import CPU
from vllm_serving.settings.base import Section, fix_error

Device = Literal["gpu", "cpu"]


class HardwareSettings(Section):
    """The GPUs of the host."""

    device: Device = "gpu"
    """What runs the model: `gpu` (NVIDIA GPUs) or `cpu` (vLLM's CPU image, no GPU; gpu and count may be left out)."""  # noqa: E501
    gpu: str = Field(min_length=1)
    """GPU model from the catalog, e.g. `V100-32GB`, `A100-80GB` (`vllm-stack gpus` lists them)."""
    count: int = Field(ge=1, le=64)
    """How many of these GPUs the host has."""
    device_ids: tuple[Annotated[int, Field(ge=0)], ...] | None = None
    """GPU indices to give the container (`--gpus device=6,7,8,9`); all GPUs when absent."""

    @field_validator("device_ids")
    @classmethod
    def _unique_ids(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if value is not None:
            if not value:
                raise fix_error("an empty device list gives the container no GPU",
                                "list GPU indices such as [6, 7, 8, 9], or remove the key for all GPUs")
            if len(set(value)) != len(value):
                raise fix_error(f"device ids repeat: {list(value)}", "list each GPU index once")
        return value

    @model_validator(mode="before")
    @classmethod
    def _cpu_defaults(cls, data: Any) -> Any:
        """device cpu: the catalog's CPU entry and one CPU (one TP rank) stand in for the GPU keys."""
        if isinstance(data, dict) and data.get("device") == "cpu":
            return {"gpu": CPU.name, "count": 1, **data}
        return data

    @model_validator(mode="after")
    def _device_matches(self) -> HardwareSettings:
        names_cpu = self.gpu.lower() == CPU.name.lower()
        if self.device == "cpu" and not names_cpu:
            raise fix_error(f"device cpu runs on no GPU, but hardware.gpu names {self.gpu}",
                            "remove hardware.gpu, or set hardware.device: gpu", field="gpu")
        if self.device == "gpu" and names_cpu:
            raise fix_error("CPU is not a GPU model", "set hardware.device: cpu (and remove hardware.gpu)",
                            field="device")
        if self.device == "cpu" and self.device_ids is not None:
            raise fix_error("a CPU target has no GPU ids to give the container",
                            "remove hardware.deviceIds", field="deviceIds")
        return self

    @model_validator(mode="after")
    def _ids_within_count(self) -> HardwareSettings:
        if self.device_ids and max(self.device_ids) >= self.count:
            raise fix_error(
                f"device id {max(self.device_ids)} does not exist on a host with {self.count} GPUs "
                f"(ids 0-{self.count - 1})",
                "raise hardware.count to the host's GPU count or pick ids below it",
                field="deviceIds",
            )
        return self

    @property
    def uses_gpus(self) -> bool:
        """False on a CPU target: no GPU request, NVIDIA runtime or GPU limit in any render."""
        return self.device == "gpu"

    @property
    def gpus_given(self) -> int:
        """GPUs the container gets."""
        return len(self.device_ids) if self.device_ids else self.count


