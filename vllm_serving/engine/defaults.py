"""What the official vLLM image does when nothing says otherwise."""

from __future__ import annotations

# vLLM's own default port inside the container.
VLLM_PORT = 8000
# VLLM_CACHE_ROOT in the official image: compiled graphs live under torch_compile_cache/.
VLLM_CACHE_PATH = "/root/.cache/vllm"
# vLLM's API server drains in-flight requests on SIGTERM (vllm/entrypoints/cli/serve.py).
STOP_SIGNAL = "SIGTERM"

# Compressed size of the official images by class (docker images, v0.19.x): the CUDA image
# carries torch, CUDA and FlashInfer; the CPU image none of them.
IMAGE_SIZE_GIB: dict[str, float] = {"cuda": 20.0, "cpu": 4.0}


def image_size_class(repository: str, tag: str | None) -> str:
    """`cpu` for vLLM's CPU images (`vllm-openai-cpu`, `-cpu` tags), `cuda` otherwise."""
    return "cpu" if "cpu" in repository or "cpu" in (tag or "") else "cuda"

