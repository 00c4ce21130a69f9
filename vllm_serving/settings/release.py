"""The `vllm-serving:release` section: where a stack's release (image, model, engine flags) comes from.

A stack without it is its own release source. With `promoteFrom`, the image, the model and the
release-level engine flags come from another stack's exported `release` output, so production runs
exactly what staging verified; the hardware, container, network and secrets stay the stack's own.
"""

from __future__ import annotations

import re

from pydantic import field_validator

from vllm_serving.findings import PROJECT
from vllm_serving.settings.base import Section, fix_error

# `ORG/PROJECT/STACK` as `pulumi stack ls --fully-qualify-stack-names` prints it; a self-managed
# backend uses the literal organization name `organization`.
_STACK_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class ReleaseSettings(Section):
    """Release promotion between stacks."""

    promote_from: str | None = None
    """Stack whose exported `release` this stack deploys, `ORG/vllm-serving/STACK` (e.g. `organization/vllm-serving/v100-staging` on a self-managed backend)."""  # noqa: E501

    @field_validator("promote_from")
    @classmethod
    def _fully_qualified(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not _STACK_REF.fullmatch(value):
            raise fix_error(
                f"'{value}' is not a fully qualified stack name",
                f"write ORG/{PROJECT}/STACK, e.g. organization/{PROJECT}/v100-staging "
                "(pulumi stack ls --fully-qualify-stack-names prints it)")
        project = value.split("/")[1]
        if project != PROJECT:
            raise fix_error(
                f"'{value}' belongs to project '{project}'; only a {PROJECT} stack exports a release",
                f"name a {PROJECT} stack: ORG/{PROJECT}/STACK")
        return value



def bare_stack(reference: str) -> str:
    """`organization/vllm-serving/v100-staging` -> `v100-staging`, which names its stack file."""
    return reference.rpartition("/")[2]
