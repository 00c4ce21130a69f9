"""The image against the GPU and the model, and how it is pulled.

Tag policy: `latest` without a digest is an error (it moves, and from v0.20 it is a CUDA 13
build). Any other tag that is not a full release (`vX.Y.Z`, optionally `-cuNNN`) and has no
digest is a warning: release tags are not re-pushed, `nightly` or `v0.19` are.
"""

from __future__ import annotations

import re

from vllm_serving.engine.release_registry import known_versions
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule, version_text

TAG = config_key("image", "tag")
RELEASE_TAG = re.compile(r"^v?\d+\.\d+\.\d+(-cu\d{3})?$")
# v0.20 made CUDA 13.0 the default build (envs.py VLLM_MAIN_CUDA_VERSION: 12.9 in v0.19.1,
# 13.0 in v0.20.2); CUDA 13's lowest target is compute_75 (`nvcc --list-gpu-arch`).
CUDA13_DEFAULT_FROM = (0, 20, 0)
CUDA_SUFFIX = re.compile(r"-cu(\d{3})$")  # -cu129, -cu130: the CUDA version x10
CUDA13_SUFFIX = 130
CUDA13_LOWEST_CC = (7, 5)
# Releases whose wheel was checked for sm_70 cubins (the fatbins of vllm/_C.abi3.so in
# vllm-0.19.1-cp38-abi3-manylinux_2_31_x86_64.whl hold 28 sm_70 entries).
SM70_KERNELS_VERIFIED = frozenset({"0.19.1"})
# Triton, which runs the Gated DeltaNet, short-convolution (and below CC 7.5 the attention)
# kernels, supports CC 8.0 and up officially.
TRITON_SUPPORTED_CC = (8, 0)
ARCH_CHECK = ('docker run --rm --gpus all --entrypoint python3 {image} -c '
              '"import torch; print(torch.cuda.get_arch_list())"')


def _official(ctx: Context) -> bool:
    return ctx.settings.image.repository.endswith("vllm-openai")


def _cuda13(ctx: Context) -> bool:
    """Whether the image is a CUDA 13 build: -cu13N tags, `latest`, and plain tags from v0.20 on."""
    tag = ctx.settings.image.tag
    if tag is None:
        return False  # a bare digest: the build is unknown
    suffix = CUDA_SUFFIX.search(tag)
    if suffix is not None:
        return int(suffix[1]) >= CUDA13_SUFFIX
    version = ctx.vllm_version
    return tag == "latest" or (version is not None and version >= CUDA13_DEFAULT_FROM)


def _latest(ctx: Context) -> Facts | None:
    image = ctx.settings.image
    if image.tag == "latest" and image.digest is None:
        return {"image": image.reference}
    return None


def _unpinned(ctx: Context) -> Facts | None:
    image = ctx.settings.image
    tag = image.tag
    if tag is not None and tag != "latest" and image.digest is None and not RELEASE_TAG.match(tag):
        return {"tag": tag}
    return None


def _unknown_release(ctx: Context) -> Facts | None:
    if not ctx.release_unknown:
        return None
    return {"tag": ctx.settings.image.tag or "(none, digest only)", "used": ctx.release.tag,
            "known": ", ".join("v" + v for v in known_versions())}


def _cuda13_volta(ctx: Context) -> Facts | None:
    if _official(ctx) and ctx.gpu.compute_capability < CUDA13_LOWEST_CC and _cuda13(ctx):
        return {"tag": ctx.settings.image.tag, "gpu": ctx.gpu.name, "sm": ctx.gpu.sm}
    return None


def _volta_unverified(ctx: Context) -> Facts | None:
    verified = not ctx.release_unknown and ctx.release.version in SM70_KERNELS_VERIFIED
    if ctx.gpu.compute_capability < CUDA13_LOWEST_CC and not verified and not (_official(ctx) and _cuda13(ctx)):
        return {"gpu": ctx.gpu.name, "sm": ctx.gpu.sm,
                "check": ARCH_CHECK.format(image=ctx.settings.image.reference)}
    return None


def _hybrid_triton(ctx: Context) -> Facts | None:
    if ctx.hybrid and ctx.gpu.compute_capability < TRITON_SUPPORTED_CC:
        return {"arch": ctx.model.architecture, "gpu": ctx.gpu.name, "cc": ctx.gpu.cc_text}
    return None


def _too_old(ctx: Context) -> Facts | None:
    need = ctx.model.min_vllm_version
    have = ctx.vllm_version
    if need is None or have is None:
        return None
    need_version = tuple(int(part) for part in need.split("."))
    if have < need_version:
        return {"have": version_text(have), "need": need, "arch": ctx.model.architecture}
    return None


CUDA_SRC = "vllm/envs.py VLLM_MAIN_CUDA_VERSION (12.9 in v0.19.1, 13.0 in v0.20.2)"

RULES: tuple[Rule, ...] = (
    Rule("image-latest", Severity.ERROR, TAG,
         "{image} moves: a redeploy can change the server, and from v0.20 latest is CUDA 13",
         "pin a release, e.g. image.tag: v0.19.1 (or add image.digest)",
         "Image tag `latest` without a digest.",
         "The same config deploys different servers over time; from v0.20 `latest` needs an "
         "R580+ driver and drops Volta.",
         f"this project's tag policy (vllm_serving/rules/image.py); {CUDA_SRC}", _latest),
    Rule("image-tag-unpinned", Severity.WARNING, TAG,
         "image tag {tag} is not a release version and no digest pins it",
         "use a release tag such as v0.19.1, or set image.digest",
         "A moving tag (nightly, v0.19, main) without a digest.",
         "Release tags are not re-pushed; other tags can change under the same config.",
         "this project's tag policy (vllm_serving/rules/image.py)", _unpinned),
    Rule("vllm-release-unknown", Severity.WARNING, TAG,
         "image tag {tag} names no vLLM release this project has data for; rules check against {used}",
         "pin a known release ({known}), or add its registry with tools/vllm_release/generate.py",
         "The image's vLLM release has a registry (flags, parsers, methods, variables).",
         "Names valid in the image's release may be refused, or wrong ones passed, against another "
         "release's lists.",
         "vllm_serving/engine/release_registry.py release_for_tag", _unknown_release),
    Rule("image-cuda13-volta", Severity.ERROR, TAG,
         "image {tag} is a CUDA 13 build, which cannot drive {gpu} ({sm})",
         "use a CUDA 12.9 build: v0.19.1, or a -cu129 tag from v0.20 on",
         "Official images from v0.20 (and -cu130 tags) on a GPU below CC 7.5.",
         "CUDA 13 builds start at compute_75: the container finds no kernel for the GPU.",
         f"{CUDA_SRC}; CUDA 13.0 nvcc --list-gpu-arch (from compute_75)", _cuda13_volta),
    Rule("image-volta-unverified", Severity.WARNING, TAG,
         "whether this image carries {sm} kernels for {gpu} is unverified",
         "before cut-over run `{check}` and confirm it lists {sm}",
         "A GPU below CC 7.5 with an image whose release was not checked for sm_70 kernels "
         "(v0.19.1's was: it carries them).",
         "Without kernels for the GPU's architecture vLLM's custom ops fail at the first call.",
         "vllm/_C.abi3.so of the v0.19.1 wheel (sm_70 cubins in its fatbins)", _volta_unverified),
    Rule("hybrid-triton-below-cc80", Severity.WARNING, config_key("hardware", "gpu"),
         "{arch}'s Gated DeltaNet and convolution layers run as Triton kernels, which Triton supports "
         "from CC 8.0; {gpu} has {cc}",
         "verify generation on a staging deployment before cut-over, or use a GPU with CC 8.0+",
         "A hybrid (linear-attention) model on a GPU below CC 8.0.",
         "vLLM has no other kernels for these layers (nor for attention below CC 7.5); a Triton "
         "compile or numerical failure shows only at the first requests.",
         "vllm/model_executor/layers/mamba/gdn_linear_attn.py (vllm/model_executor/layers/fla/ops); "
         "vllm/model_executor/layers/mamba/ops/causal_conv1d.py; vllm/v1/attention/backends/triton_attn.py",
         _hybrid_triton),
    Rule("image-too-old-for-model", Severity.ERROR, TAG,
         "vLLM {have} predates {arch}, supported from v{need}",
         "use image.tag v{need} or later",
         "The image's vLLM version runs the model's architecture.",
         "vLLM exits: the architecture is not in its model registry.",
         "vllm/model_executor/models/registry.py (_MULTIMODAL_MODELS); vllm_serving/catalog/models.py "
         "min_vllm_version", _too_old),
)
