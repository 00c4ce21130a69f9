"""Promoting a release: another stack's verified release joined with this stack's own settings.

Precedence for a promoting stack: the release's carried keys (`release.CARRIED`), then the stack
file, then the project defaults in `Pulumi.yaml`. A carried key that the stack file sets to a
value other than the release's is an error, never silently dropped. Every finding about a
promoted stack names both stacks, and those about a carried key say to fix the source.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from pydantic import ValidationError

from vllm_serving.findings import PROJECT, ConfigError, Finding, Severity, config_key
from vllm_serving.release.carried import CARRIED, SECTION_MODELS, argv_fingerprint, is_carried
from vllm_serving.settings import StackSettings, TargetSettings
from vllm_serving.settings.release import ReleaseSettings, bare_stack
from vllm_serving.settings.stack_config import section_error  # the one place errors get their key and fix

RELEASE_PARTS = ("stack", "image", "model", "engine", "argvFingerprint")
PROMOTE_KEY = config_key("release", "promoteFrom")


class Promotion(msgspec.Struct, frozen=True):
    """One stack deploying another stack's release."""

    source: str
    """The source as configured, `ORG/vllm-serving/STACK`."""
    target: str
    """The promoting stack's name."""
    release: Mapping[str, Any]
    """The source's exported `release` output."""
    deployed: bool = True
    """False offline, where the release is derived from the source's stack file (no digest)."""

    @property
    def source_stack(self) -> str:
        return bare_stack(self.source)

    def attribute(self, finding: Finding) -> Finding:
        """The finding with both stacks named; an error on a carried key points its fix at the source."""
        dotted = finding.key.split(":", 1)[-1]
        if not is_carried(dotted):
            return msgspec.structs.replace(finding, message=f"{finding.message} [stack {self.target}, "
                                                        f"release promoted from {self.source_stack}]")
        noted = msgspec.structs.replace(finding, message=f"{finding.message} [{dotted} is in the release "
                                                     f"of {self.source_stack}, promoted into {self.target}]")
        if finding.severity is Severity.WARNING:
            return noted
        return msgspec.structs.replace(
            noted, fix=f"change it in {self.source_stack}, redeploy and verify it there, then promote "
                       f"again; {self.target} cannot override it ({finding.fix})")


def _raw(values: Mapping[str, Any], name: str) -> tuple[str, Any]:
    """The key a section is stored under (`vllm-serving:engine` or bare `engine`) and its value."""
    for key in (f"{PROJECT}:{name}", name):
        if key in values:
            return key, values[key]
    return f"{PROJECT}:{name}", None


def promote_from(values: Mapping[str, Any], stack: str | None = None) -> str | None:
    """`release.promoteFrom` from raw config, validated on its own: the other sections may be
    incomplete until the release fills them. `stack`, when given, may not name itself."""
    _, raw = _raw(values, "release")
    if raw is None:
        return None
    try:
        source = ReleaseSettings.model_validate(raw).promote_from
    except ValidationError as exc:
        raise section_error("release", exc) from None
    if source is not None and bare_stack(source) == stack:
        raise ConfigError([_error(
            "release-cycle", PROMOTE_KEY, f"stack {stack} promotes from itself",
            "name the staging stack whose release this one deploys, or remove release.promoteFrom")])
    return source


def target_kind(values: Mapping[str, Any]) -> str:
    """The backend, read before the release fills the other sections."""
    _, raw = _raw(values, "target")
    try:
        return TargetSettings.model_validate(raw or {}).kind
    except ValidationError as exc:
        raise section_error("target", exc) from None


def _error(code: str, key: str, message: str, fix: str) -> Finding:
    return Finding(code, Severity.ERROR, key, message, fix)


def _default(section: str, key: str) -> Any:
    model = SECTION_MODELS[section]
    field = next(f for n, f in model.model_fields.items() if (f.alias or n) == key)
    return field.get_default(call_default_factory=True)


def _check_release(promotion: Promotion) -> Mapping[str, Any]:
    release = promotion.release
    if not isinstance(release, Mapping) or any(part not in release for part in RELEASE_PARTS):
        stack = promotion.source_stack
        raise ConfigError([_error(
            "release-missing", PROMOTE_KEY,
            f"{promotion.source} exports no release (stack {promotion.target} promotes from it)",
            f"deploy {stack} with this version first (pulumi up -s {stack}), or fix release.promoteFrom")])
    return release


def promote_values(
    values: Mapping[str, Any], promotion: Promotion, project_defaults: Mapping[str, Any],
) -> dict[str, Any]:
    """The stack's raw config with the release's carried keys in place of its own."""
    release = _check_release(promotion)
    merged = dict(values)
    conflicts: list[Finding] = []
    for section, carried in CARRIED.items():
        key, own = _raw(values, section)
        if own is None:
            own = {}
        if not isinstance(own, Mapping):
            continue  # the settings parser reports the wrong type with its fix
        _, project = _raw(project_defaults, section)
        project = project if isinstance(project, Mapping) else {}
        shipped = release[section]
        for name in sorted(set(own) & carried):
            value = own[name]
            if value in (shipped.get(name, _default(section, name)), project.get(name, object())):
                continue  # agrees with the release, or is the project-wide default it replaces
            conflicts.append(_error(
                "release-key-overridden", config_key(section, name),
                f"stack {promotion.target} sets {section}.{name}={value!r}, but its release comes from "
                f"{promotion.source_stack}, which runs {shipped.get(name, '(unset)')!r}",
                f"remove {section}.{name} from Pulumi.{promotion.target}.yaml; change it in "
                f"{promotion.source_stack} and promote again"))
        merged[key] = {**{k: v for k, v in own.items() if k not in carried}, **shipped}
    if conflicts:
        raise ConfigError(conflicts)
    return merged


def promotion_findings(settings: StackSettings, promotion: Promotion) -> list[Finding]:
    """What is wrong with the promotion itself, beyond the rules every stack passes."""
    checks = (_fingerprint(settings, promotion), _backend(settings, promotion), _tag_only(settings, promotion))
    return [f for f in checks if f]


def _tag_only(settings: StackSettings, promotion: Promotion) -> Finding | None:
    # offline the release comes from a stack file, which never knows the pulled digest
    if not promotion.deployed or promotion.release["image"].get("digest"):
        return None
    return Finding(
        "release-tag-only", Severity.WARNING, PROMOTE_KEY,
        f"the release of {promotion.source_stack} pins the image by tag only "
        f"({settings.image.reference}); a moved tag would deploy an image nobody verified",
        f"deploy {promotion.source_stack} with the Docker backend (it exports the pulled digest) "
        "or set image.digest there")


def _backend(settings: StackSettings, promotion: Promotion) -> Finding | None:
    verified_on = promotion.release.get("target")
    if verified_on in (None, settings.target.kind):
        return None
    return Finding(
        "release-backend-differs", Severity.WARNING, config_key("target", "kind"),
        f"the release was verified on {verified_on} ({promotion.source_stack}) and is deployed on "
        f"{settings.target.kind} here ({promotion.target}): model.volumeName names a Docker volume on "
        "one and a PersistentVolumeClaim on the other, and the image is pulled differently",
        f"check that {promotion.target} finds the weights where the release says, or verify the "
        f"release on a {settings.target.kind} staging stack")


def _fingerprint(settings: StackSettings, promotion: Promotion) -> Finding | None:
    """An error when this code renders the release differently from the code that deployed it."""
    here, there = argv_fingerprint(settings), promotion.release["argvFingerprint"]
    if here == there:
        return None
    return _error(
        "release-fingerprint-mismatch", PROMOTE_KEY,
        f"the release of {promotion.source_stack} renders to vLLM flags {here[:19]}... here but ran "
        f"as {str(there)[:19]}... there [stack {promotion.target}]",
        f"this commit renders the release differently from the one that deployed "
        f"{promotion.source_stack}: deploy {promotion.source_stack} from this commit, verify it, "
        "then promote")
