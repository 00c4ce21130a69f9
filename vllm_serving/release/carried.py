"""A stack's release: the image, the model and the release-level engine flags it runs.

Every stack exports its release (the `release` output); a stack with `release.promoteFrom`
deploys another stack's release instead of its own sections' values. What belongs to the
release is data (`CARRIED`): what staging verifies (numerics, parsers, context length, image).
How the model is laid onto one host's GPUs stays with each stack (`ENGINE_OWN_KEYS`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel

from vllm_serving.command.vllm_argv import render_flags
from vllm_serving.engine.flags import FLAGS
from vllm_serving.settings import EngineSettings, ImageSettings, ModelSettings, StackSettings

# Engine keys that depend on the host's GPUs and memory, not on what was verified.
ENGINE_OWN_KEYS = frozenset({
    "tensorParallelSize", "pipelineParallelSize", "dataParallelSize", "gpuMemoryUtilization", "maxNumSeqs",
    "maxNumBatchedTokens",
})


def _aliases(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(f.alias or n for n, f in model.model_fields.items())


# Section -> the keys (camelCase, as in the stack file) a release carries. Credentials
# (image.username), data safety (model.protect) and the hardware-bound flags stay the stack's own.
CARRIED: dict[str, frozenset[str]] = {
    "image": frozenset({"registry", "repository", "tag", "digest"}),
    "model": frozenset({"name", "architecture", "configFile", "hostPath", "volumeName", "containerPath", "servedName"}),
    "engine": _aliases(EngineSettings) - ENGINE_OWN_KEYS,
}
SECTION_MODELS: dict[str, type[BaseModel]] = {
    "image": ImageSettings, "model": ModelSettings, "engine": EngineSettings,
}


def is_carried(dotted: str) -> bool:
    """`engine.dtype` -> True: the key's value comes from the release when promoting."""
    section, _, key = dotted.partition(".")
    return key.split(".", 1)[0].split("[", 1)[0] in CARRIED.get(section, frozenset())


# The vLLM flags the release decides (those set by a carried key), in the argv's order.
RELEASE_FLAGS = tuple(flag for flag in FLAGS if is_carried(flag.key))


def argv_fingerprint(settings: StackSettings) -> str:
    """sha256 of the release's part of the vLLM command line (flags, extra args, env).

    Recomputed where a release is promoted: a different value means this code renders the same
    release differently from the code that deployed the source, so it is not what was verified.
    """
    payload = json.dumps(
        {"argv": [*render_flags(settings, RELEASE_FLAGS), *settings.engine.extra_args],
         "env": sorted(settings.engine.env.items())},
        separators=(",", ":"),
    )
    return "sha256:" + hashlib.sha256(payload.encode()).hexdigest()


def _section(settings: StackSettings, name: str) -> dict[str, Any]:
    section: BaseModel = getattr(settings, name)
    fields = {n for n, f in type(section).model_fields.items() if (f.alias or n) in CARRIED[name]}
    dumped: dict[str, Any] = section.model_dump(
        mode="json", by_alias=True, exclude_none=True, include=fields)
    return dumped


def release_of(settings: StackSettings, stack: str) -> dict[str, Any]:
    """The `release` output: carried sections in stack-file form, plus where it came from."""
    return {
        "stack": stack,
        "promotedFrom": settings.release.promote_from,
        "target": settings.target.kind,
        **{name: _section(settings, name) for name in CARRIED},
        "argvFingerprint": argv_fingerprint(settings),
    }


def with_digest(release: dict[str, Any], repo_digest: str | None) -> dict[str, Any]:
    """The release with the digest the host pulled (`repo@sha256:...`), so a promotion pins it."""
    if not repo_digest or "@" not in repo_digest or release["image"].get("digest"):
        return release
    return {**release, "image": {**release["image"], "digest": repo_digest.rsplit("@", 1)[1]}}
