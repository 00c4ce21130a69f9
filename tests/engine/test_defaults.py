"""What the official vLLM image does when nothing says otherwise, as vLLM's source says it (v0.19.1;
the same from v0.10.2 to v0.34.0). These are the facts the renderers build on: the port a server
listens on, the signal that drains it, where its compile cache lives, how big its image is."""

from __future__ import annotations

import pytest

from vllm_serving.engine.defaults import (
    IMAGE_SIZE_GIB,
    STOP_SIGNAL,
    VLLM_CACHE_PATH,
    VLLM_PORT,
    image_size_class,
)


def test_the_server_listens_where_vllm_serve_listens_by_default() -> None:
    # vllm/entrypoints/openai/cli_args.py: FrontendArgs.port: int = 8000
    assert VLLM_PORT == 8000


def test_the_stop_signal_is_the_one_vllm_drains_on() -> None:
    # vllm/entrypoints/cli/serve.py: "Catch SIGTERM and SIGINT to allow graceful shutdown"; Docker and
    # the kubelet send SIGTERM, then SIGKILL after the grace period
    assert STOP_SIGNAL == "SIGTERM"


def test_the_compile_cache_is_vllms_cache_root_in_the_image() -> None:
    # vllm/envs.py: VLLM_CACHE_ROOT = os.path.expanduser("~/.cache/vllm"); the image runs as root
    assert VLLM_CACHE_PATH == "/root/.cache/vllm"


def test_the_cuda_image_is_the_large_one() -> None:
    # vllm/vllm-openai v0.19.x, compressed on Docker Hub: ~20 GiB (torch, CUDA, FlashInfer); the
    # CPU build a fifth of it. The pull timeouts are sized from these (timing.py).
    assert 15 <= IMAGE_SIZE_GIB["cuda"] <= 30 and 2 <= IMAGE_SIZE_GIB["cpu"] <= 8
    assert IMAGE_SIZE_GIB["cuda"] >= 3 * IMAGE_SIZE_GIB["cpu"]


@pytest.mark.parametrize(("repository", "tag", "size"), [
    ("vllm/vllm-openai", "v0.19.1", "cuda"), ("harbor.local/vllm/vllm-openai", None, "cuda"),
    ("public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo", "v0.19.1", "cpu"),  # Pulumi.local.yaml's
    ("vllm/vllm-openai", "v0.19.1-cpu", "cpu"),
])
def test_the_image_class_follows_the_repository_or_the_tag(repository: str, tag: str | None, size: str) -> None:
    assert image_size_class(repository, tag) == size
