"""image.py at its boundaries: tags, the release registry, CUDA 13 and Volta, Triton below CC 8.0."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary
from vllm_serving.catalog.models import MODELS
from vllm_serving.engine.release_registry import known_versions

DIGEST = "sha256:" + "0" * 64
# the same model with every layer full attention: the nearest attention-only twin
DENSE = {"name": None, "architecture": MODELS["Qwen3.5-27B"].model_copy(update={
    "linear_attention": None, "full_attention_layers": MODELS["Qwen3.5-27B"].num_hidden_layers})}


def tag(value: str | None, digest: str | None = None) -> dict[str, object]:
    return {"image": {"tag": value, "digest": digest}}


BOUNDARIES = [
    Boundary("image-latest", "a100", tag("latest"), tag("latest", DIGEST), "latest -> latest@digest"),
    Boundary("image-tag-unpinned", "a100", tag("v0.19"), tag("v0.19.1"), "v0.19 -> v0.19.1"),
    Boundary("image-tag-unpinned", "a100", tag("nightly"), tag("nightly", DIGEST), "nightly -> nightly@digest"),
    Boundary("image-tag-unpinned", "a100", tag("v0.19"), tag("latest"), "v0.19 -> latest (image-latest's finding)"),
    Boundary("vllm-release-unknown", "a100", tag("v0.19.0"), tag("v0.19.1"), "v0.19.0 -> v0.19.1",
             says=(f"v{known_versions()[-1]}", "v0.19.1, v0.20.2")),
    Boundary("vllm-release-unknown", "a100", tag(None, DIGEST), tag("v0.19.1-cu128", DIGEST),
             "digest only -> a -cu128 tag of a known release", says=("image tag (none, digest only) names",)),
    Boundary("image-cuda13-volta", "v100", {**tag("v0.20.2"), "hardware": {"gpu": "V100-32GB"}},
             {**tag("v0.20.2"), "hardware": {"gpu": "T4"}}, "CUDA 13: V100 (7.0) -> T4 (7.5)"),
    Boundary("image-cuda13-volta", "v100", tag("v0.20.2"), tag("v0.20.2-cu129"), "v0.20.2 -> v0.20.2-cu129"),
    Boundary("image-cuda13-volta", "v100", tag("v0.19.1-cu130"), tag("v0.19.1"), "v0.19.1-cu130 -> v0.19.1"),
    Boundary("image-cuda13-volta", "v100", tag("v0.20.0"), tag("v0.19.9"), "v0.20.0 (CUDA 13 default) -> v0.19.9"),
    Boundary("image-cuda13-volta", "v100", tag("v0.20.2", DIGEST), tag(None, DIGEST),
             "v0.20.2@digest -> a bare digest (build unknown: image-volta-unverified instead)"),
    Boundary("image-cuda13-volta", "v100", tag("latest"), {**tag("latest"), "hardware": {"gpu": "T4"}},
             "latest (a CUDA 13 build from v0.20): V100 -> T4"),
    Boundary("image-volta-unverified", "v100", tag("v0.20.2-cu129"), tag("v0.19.1"),
             "sm_70 unchecked (v0.20.2) -> checked (v0.19.1)",
             says=("192.168.122.156:30000/vllm/vllm-openai:v0.20.2-cu129",)),
    Boundary("image-volta-unverified", "v100", tag("v0.20.2-cu129"),
             {**tag("v0.20.2-cu129"), "hardware": {"gpu": "T4"}},
             "V100 (7.0) -> T4 (7.5)"),
    Boundary("hybrid-triton-below-cc80", "v100", {"hardware": {"gpu": "T4"}}, {"hardware": {"gpu": "A100-40GB"}},
             "hybrid model: T4 (7.5) -> A100 (8.0)"),
    Boundary("hybrid-triton-below-cc80", "v100", {}, {"model": DENSE}, "V100: hybrid -> attention-only model"),
    Boundary("image-too-old-for-model", "v100", tag("v0.16.0"), tag("v0.17.0"), "v0.16.0 -> v0.17.0",
             says=("vLLM v0.16.0 predates",)),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)
