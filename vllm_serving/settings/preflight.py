"""The `vllm-serving:preflight` section: the checks run with the new image before it replaces the server.

Docker: a one-shot container of the new image on the server's GPUs and weights mount, run before
the serving container is replaced, and again when the image, the GPUs, the weights or vLLM's argv
change. Kubernetes: the same checks as the pod's init container.
"""

from __future__ import annotations

from vllm_serving.settings.base import Section


class PreflightSettings(Section):
    """The preflight before cut-over."""

    enabled: bool = True
    """Before cut-over, with the new image: check the NVIDIA runtime, the GPUs, torch's arch list, the weights,
    the GPUs' free memory and curl, and let the image's own vLLM judge the server's exact argv."""
