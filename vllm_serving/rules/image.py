"""The image against the GPU and the model, and how it is pulled.

Tag policy: `latest` without a digest is an error (it moves, and from v0.20 it is a CUDA 13
build). Any other tag that is not a full release (`vX.Y.Z`, optionally `-cuNNN`) and has no
digest is a warning: release tags are not re-pushed, `nightly` or `v0.19` are.
"""

from __future__ import annotations

import re

from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule, version_text

TAG = config_key("image", "tag")
RELEASE_TAG = re.compile(r"^v?\d+\.\d+\.\d+(-cu\d{3})?$")
CUDA13_DEFAULT_FROM = (0, 20, 0)  # v0.20 made CUDA 13.0 the default image build
ARCH_CHECK = ('docker run --rm --gpus all --entrypoint python3 {image} -c '
              '"import torch; print(torch.cuda.get_arch_list())"')


def _official(ctx: Context) -> bool:
    return ctx.settings.image.repository.endswith("vllm-openai")


def _cuda13(ctx: Context) -> bool:
    """Whether the image is a CUDA 13 build: -cu130 tags, and plain tags from v0.20 on."""
    tag = ctx.settings.image.tag or ""
    if re.search(r"-cu13\d$", tag):
        return True
    if re.search(r"-cu12\d$", tag):
        return False
    if tag == "latest":
        return True
    version = ctx.vllm_version
    return version is not None and version >= CUDA13_DEFAULT_FROM


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


def _cuda13_volta(ctx: Context) -> Facts | None:
    if _official(ctx) and ctx.gpu.cc < 7.5 and _cuda13(ctx):
        return {"tag": ctx.settings.image.tag, "gpu": ctx.gpu.name, "sm": ctx.gpu.sm}
    return None


def _volta_unverified(ctx: Context) -> Facts | None:
    if ctx.gpu.cc < 7.5 and not (_official(ctx) and _cuda13(ctx)):
        return {"gpu": ctx.gpu.name, "sm": ctx.gpu.sm,
                "check": ARCH_CHECK.format(image=ctx.settings.image.reference)}
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


RULES: tuple[Rule, ...] = (
    Rule("image-latest", Severity.ERROR, TAG,
         "{image} moves: a redeploy can change the server, and from v0.20 latest is CUDA 13",
         "pin a release, e.g. image.tag: v0.19.1 (or add image.digest)",
         "Image tag `latest` without a digest.",
         "The same config deploys different servers over time; from v0.20 `latest` needs an "
         "R580+ driver and drops Volta.",
         "vllm-facts.md, The official image and its command line", _latest),
    Rule("image-tag-unpinned", Severity.WARNING, TAG,
         "image tag {tag} is not a release version and no digest pins it",
         "use a release tag such as v0.19.1, or set image.digest",
         "A moving tag (nightly, v0.19, main) without a digest.",
         "Release tags are not re-pushed; other tags can change under the same config.",
         "vllm-facts.md, The official image and its command line", _unpinned),
    Rule("image-cuda13-volta", Severity.ERROR, TAG,
         "image {tag} is a CUDA 13 build, which cannot drive {gpu} ({sm})",
         "use a CUDA 12.9 build: v0.19.1, or a -cu129 tag from v0.20 on",
         "Official images from v0.20 (and -cu130 tags) on a GPU below CC 7.5.",
         "CUDA 13 dropped Volta; the container finds no usable GPU.",
         "vllm-facts.md, Compute capability rules / The official image", _cuda13_volta),
    Rule("image-volta-unverified", Severity.WARNING, TAG,
         "whether this image still carries {sm} kernels for {gpu} is unverified",
         "before cut-over run `{check}` and confirm it lists {sm}",
         "A GPU below CC 7.5 with an image that is not known to be CUDA 13.",
         "vLLM's build lists sm_70 only for CUDA < 12.8; v0.19.1's kernels for it are unverified.",
         "vllm-facts.md, Compute capability rules (unverified)", _volta_unverified),
    Rule("image-too-old-for-model", Severity.ERROR, TAG,
         "vLLM {have} predates {arch}, supported from v{need}",
         "use image.tag v{need} or later",
         "The image's vLLM version runs the model's architecture.",
         "vLLM exits: the architecture is not in its model registry.",
         "vllm-facts.md, Qwen3.5-27B (vLLM support from 0.17.0)", _too_old),
)
