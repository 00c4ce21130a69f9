"""The `vllm-serving:waivers` list: findings a stack sets aside on purpose, each with its reason.

A rule can read vLLM wrong for a stack (a parser from a plugin, a GPU the catalog rounds); a waiver
lets that stack deploy past it without a fork. Here only the form of each entry is checked; which
codes exist, which may be waived and whether each waiver still matches a finding is decided after
the rules ran (`vllm_serving/rules/waivers.py`), the same way for `vllm-stack` and the program.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, field_validator

from vllm_serving.findings import PROJECT
from vllm_serving.settings.base import Section, fix_error
from vllm_serving.settings.shown import shown
from vllm_serving.settings.text_checks import check_text, no_control

MAX_REASON_CHARS = 500
"""A reason is a sentence or two and a ticket, printed beside the finding in every view."""
_CODE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
# A config key as findings name it: sections and fields, env names, list indices.
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:\[\d+\])*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])*)*")


class Waiver(Section):
    """One finding set aside on purpose."""

    code: str
    """The finding's code as `vllm-stack check` prints it, e.g. `tool-parser-unknown`."""
    reason: str
    """Why the finding does not hold for this stack (a ticket helps); shown beside it in every view."""
    key: str | None = None
    """The finding's config key (`engine.toolCallParser`); without it the waiver covers the code at every key."""

    @field_validator("code")
    @classmethod
    def _code(cls, value: str) -> str:
        return check_text(value, _CODE, f"{shown(value)!r} is not a finding code",
                          "write the code as vllm-stack check prints it, e.g. tool-parser-unknown "
                          "(docs/rules.md lists every code)")

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        if not value.strip():
            raise fix_error("the reason is blank", "say why the finding does not hold for this stack, "
                            "e.g. 'parser from our plugin image, see ticket OPS-123'")
        no_control(value, "the reason")
        if len(value) > MAX_REASON_CHARS:
            raise fix_error(f"the reason has {len(value)} characters",
                            f"keep it to at most {MAX_REASON_CHARS}: a sentence or two and a ticket")
        return value

    @field_validator("key")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        if value is None:
            return None
        dotted = value.removeprefix(f"{PROJECT}:")
        check_text(dotted, _KEY, f"{shown(value)!r} is not a config key",
                   "write the key as the finding names it, e.g. engine.toolCallParser, or leave key out "
                   "to cover the code at every key")
        return f"{PROJECT}:{dotted}"  # findings name keys in full


def _each_once(waivers: tuple[Waiver, ...]) -> tuple[Waiver, ...]:
    seen: dict[tuple[str, str | None], int] = {}
    for index, waiver in enumerate(waivers):
        first = seen.setdefault((waiver.code, waiver.key), index)
        if first != index:
            raise fix_error(f"waives {waiver.code}{' at ' + waiver.key if waiver.key else ''} again "
                            f"(waivers[{first}] already does)",
                            f"remove this entry, or merge its reason into waivers[{first}]", field=index)
    return waivers


MAX_WAIVERS = 64
"""A stack sets aside a few findings; each waiver is matched against every finding and an unknown
code against every code, so 6,000 of them took `check` past its time budget."""


def _few(value: object) -> object:
    if isinstance(value, (list, tuple)) and len(value) > MAX_WAIVERS:
        raise fix_error(f"waivers has {len(value)} entries", f"keep at most {MAX_WAIVERS}: fix the findings "
                        "instead of waiving them, or waive a code at every key by leaving its key out")
    return value


Waivers = Annotated[tuple[Waiver, ...], BeforeValidator(_few), AfterValidator(_each_once)]
"""The stack's waivers, each code (and key) once."""
