"""`vllm-serving:image`: the vLLM image and its registry."""

from __future__ import annotations

import re

from pydantic import field_validator, model_validator

from vllm_serving.settings.base import Seconds, Section, fix_error

# Whole-value patterns, applied with fullmatch (settings/text_checks.py says why).
_REGISTRY = re.compile(r"[A-Za-z0-9.-]+(:\d{1,5})?")
_REPOSITORY = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_DIGEST = re.compile(r"sha256:[a-f0-9]{64}")
# Harbor robot accounts look like robot$project+name; basic auth forbids ':' in a user name.
_USERNAME = re.compile(r"[^\s:\x00-\x1f\x7f]{1,255}")


class ImageSettings(Section):
    """The vLLM image and the registry it comes from."""

    registry: str | None = None
    """Registry host[:port], e.g. a Harbor at `192.168.122.156:30000`; Docker Hub when absent."""
    repository: str = "vllm/vllm-openai"
    """Repository inside the registry."""
    tag: str | None = None
    """Image tag, e.g. `v0.19.1`; pin a release, never `latest`."""
    digest: str | None = None
    """Content digest `sha256:...`; pins the exact image even if the tag moves."""
    username: str | None = None
    """Registry user; the password is the secret `vllm-serving:registryPassword`."""
    pull_timeout: Seconds | None = None
    """How long the pull may take (`pulumi up` gives up after it); derived from the image's size class when absent."""  # noqa: E501

    @field_validator("registry")
    @classmethod
    def _registry(cls, value: str | None) -> str | None:
        if value is None or _REGISTRY.fullmatch(value):
            return value
        if "@" in value:  # user[:password]@host: never quoted back, it may hold the password
            raise fix_error("holds credentials before an '@' (not shown here)",
                            "write the host alone (e.g. harbor.local:30000), the user in image.username and "
                            "the password with: pulumi config set --secret registryPassword")
        host, slash, path = value.partition("/")
        if slash and _REGISTRY.fullmatch(host):  # a Harbor project written into the registry
            raise fix_error(f"{value!r} is not a registry host: it has a path",
                            f"write registry: {host} and put the path in the repository "
                            f"(repository: {path.strip('/')}/...)")
        raise fix_error(f"{value!r} is not a registry host",
                        "write host or host:port without a scheme or path, e.g. harbor.local:30000")

    @field_validator("repository")
    @classmethod
    def _repository(cls, value: str) -> str:
        if not _REPOSITORY.fullmatch(value):
            raise fix_error(f"{value!r} is not a repository name",
                            "use lower-case path segments such as vllm/vllm-openai, with no tag or registry")
        return value

    @field_validator("tag")
    @classmethod
    def _tag(cls, value: str | None) -> str | None:
        if value is not None and not _TAG.fullmatch(value):
            raise fix_error(f"{value!r} is not a valid image tag", "write a tag such as v0.19.1")
        return value

    @field_validator("digest")
    @classmethod
    def _digest(cls, value: str | None) -> str | None:
        if value is not None and not _DIGEST.fullmatch(value):
            raise fix_error(f"{value!r} is not an image digest",
                            "write sha256: followed by 64 hex digits, as `docker inspect` prints it")
        return value

    @field_validator("username")
    @classmethod
    def _username(cls, value: str | None) -> str | None:
        if value is not None and ":" in value:  # user:password: never quoted back
            raise fix_error("holds a ':' - a password after the user name? (the value is not shown here)",
                            "write the user alone, e.g. admin, and the password with: "
                            "pulumi config set --secret registryPassword")
        if value is not None and not _USERNAME.fullmatch(value):
            raise fix_error(f"{value[:40]!r} is not a registry user name",
                            "write the user alone (no spaces, ':' or line breaks), e.g. admin or robot$ci")
        return value

    @model_validator(mode="after")
    def _pinned(self) -> ImageSettings:
        if self.tag is None and self.digest is None:
            raise fix_error("the image has neither tag nor digest",
                            "set image.tag to a release such as v0.19.1 (or image.digest)", field="tag")
        return self

    @property
    def reference(self) -> str:
        """`registry/repository:tag@digest` as docker pull takes it."""
        ref = f"{self.registry}/{self.repository}" if self.registry else self.repository
        if self.tag:
            ref += f":{self.tag}"
        if self.digest:
            ref += f"@{self.digest}"
        return ref


