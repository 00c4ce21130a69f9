"""What the official vLLM image does when nothing says otherwise."""

from __future__ import annotations

# vLLM's own default port inside the container.
VLLM_PORT = 8000
# VLLM_CACHE_ROOT in the official image: compiled graphs live under torch_compile_cache/.
VLLM_CACHE_PATH = "/root/.cache/vllm"

