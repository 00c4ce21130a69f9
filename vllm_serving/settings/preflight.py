"""The `vllm-serving:preflight` section: the checks run with the new image before it replaces the server.

Docker: a one-shot container of the new image on the server's GPUs and weights mount, run before
the serving container is replaced, and again only when the image, the GPUs or the weights change.
Kubernetes: the same checks as the pod's init container.
"""

from __future__ import annotations

from vllm_serving.settings.base import Section


class PreflightSettings(Section):
    """The preflight before cut-over."""

    enabled: bool = True
    """Check the GPUs, torch's arch list, the weights, the NVIDIA runtime and curl with the new image before cut-over."""  # noqa: E501
