"""Every shipped stack, and test variants of it, run through the real program under mocks.

A variant is a small override of a stack file (sections merged over it, a None value removes a
key) plus the secrets set, so the contract covers registrations the shipped files do not make:
secrets, registry credentials, specific GPUs, named volumes, created claims.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.paths import SHIPPED_STACK_FILES
from tests.pulumi_harness import Registered, run_program
from tests.stack_builders import PROJECT, stack_values
from vllm_serving.release.carried import is_carried
from vllm_serving.release.promotion import promote_from

# Recognisable values for every secret the config accepts.
SECRETS: dict[str, str] = {
    "apiKey": "SENTINEL-contract-api-key",
    "registryPassword": "SENTINEL-contract-registry-pw",
    "hfToken": "SENTINEL-contract-hf-token",
}


@dataclass(frozen=True)
class Variant:
    name: str
    sections: dict[str, Any] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    # Secrets given on top of `secrets` are those the stack needs to deploy at all (a registry
    # username needs its password), so every variant runs on every stack of its kind.

    def overridden_keys(self) -> Iterator[str]:
        for section, keys in self.sections.items():
            yield from (f"{section}.{key}" for key in keys)


@dataclass(frozen=True)
class Case:
    stack: str
    variant: Variant

    @property
    def id(self) -> str:
        return f"{self.stack}/{self.variant.name}"

    def values(self) -> dict[str, Any]:
        return stack_values(self.stack, **self.variant.sections)

    def secrets(self) -> dict[str, str]:
        keys = set(self.variant.secrets)
        if (self.values().get(f"{PROJECT}:image") or {}).get("username"):
            keys.add("registryPassword")
        return {key: SECRETS[key] for key in sorted(keys)}

    def registrations(self) -> list[Registered]:
        """Every resource the program registers for this stack and variant (one run per session)."""
        if self.id not in _REGISTERED:
            _REGISTERED[self.id] = run_program(self.values(), stack=self.stack, secrets=self.secrets()).resources
        return _REGISTERED[self.id]


_REGISTERED: dict[str, list[Registered]] = {}


def shipped_stacks(kind: str) -> list[str]:
    """Names of the stack files in the repository root whose target is `kind`."""
    names = [p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in SHIPPED_STACK_FILES]
    return [n for n in names if (stack_values(n).get(f"{PROJECT}:target") or {}).get("kind", "docker") == kind]


def _applies(stack: str, variant: Variant) -> bool:
    # A promoting stack takes image, model and release-level engine keys from its source's
    # release and refuses them in its own file: those variants run on the source stack instead.
    promoted = promote_from(stack_values(stack), stack) is not None
    if promoted and any(is_carried(key) for key in variant.overridden_keys()):
        return False
    # A CPU stack (hardware.device: cpu) has no GPUs to pick: GPU ids are a config error there.
    cpu = (stack_values(stack).get(f"{PROJECT}:hardware") or {}).get("device") == "cpu"
    return not (cpu and "hardware.deviceIds" in variant.overridden_keys())


def cases(kind: str, variants: tuple[Variant, ...]) -> list[Any]:
    """pytest params: each shipped stack of `kind` with each variant that applies to it."""
    found = [Case(stack, v) for stack in shipped_stacks(kind) for v in variants if _applies(stack, v)]
    return [pytest.param(case, id=case.id) for case in found]
