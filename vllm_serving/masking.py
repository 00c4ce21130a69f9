"""How a secret appears in anything this project prints or renders: masked, unless the operator hands its value in."""

from __future__ import annotations

from collections.abc import Mapping

MASK = "********"


def shown(secrets: Mapping[str, str] | None, name: str) -> str:
    """The value of secret `name` when `secrets` reveals it, the mask otherwise."""
    return (secrets or {}).get(name, MASK)
