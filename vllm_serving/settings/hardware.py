"""`vllm-serving:hardware`: the GPUs of the host."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator, model_validator

from vllm_serving.settings.base import Section, fix_error


class HardwareSettings(Section):
    """The GPUs of the host."""

    gpu: str = Field(min_length=1)
    """GPU model from the catalog, e.g. `V100-32GB`, `A100-80GB` (see `vllm-stack plan`)."""
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
    def gpus_given(self) -> int:
        """GPUs the container gets."""
        return len(self.device_ids) if self.device_ids else self.count


