"""The `vllm-serving:capacity` section: what the deployment must hold, checked at preview
against the pessimistic plan and after deploy by `vllm-stack smoke` against the server's own
figures."""

from __future__ import annotations

from pydantic import Field

from vllm_serving.settings.base import Section


class CapacitySettings(Section):
    """Capacity the stack promises."""

    min_concurrency: float | None = Field(default=None, gt=0)
    """Requests of engine.maxModelLen tokens the KV cache must hold at once, e.g. `4`: preview refuses a plan that holds fewer at the release's worst measured error, smoke a server that reports fewer."""  # noqa: E501
