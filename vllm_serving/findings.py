"""What the checks report: one finding per problem, naming the config key and the fix."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

import msgspec

from vllm_serving.terminal_text import printable

PROJECT = "vllm-serving"


class Severity(StrEnum):
    ERROR = "error"  # blocks the deployment
    WARNING = "warning"  # printed, and logged under Pulumi


class Finding(msgspec.Struct, frozen=True):
    """One problem with a stack: stable code, severity, the config key, what is wrong and the fix."""

    code: str
    severity: Severity
    key: str
    message: str
    fix: str
    waived: str | None = None
    """The reason of the stack's waiver (`vllm-serving:waivers`) that sets this finding aside;
    None when no waiver covers it. A waived finding keeps its severity and stays in every view."""

    @property
    def blocks(self) -> bool:
        """An error no waiver sets aside: `check` exits 1, `plan` and the program refuse."""
        return self.severity is Severity.ERROR and self.waived is None

    def line(self) -> str:
        """`SEVERITY CODE key: message - fix`, the CLI's one-line form (see `finding_line`)."""
        return finding_line(self.as_dict())

    def as_dict(self) -> dict[str, str]:
        """The finding as data; `waived` (the waiver's reason) only when a waiver covers it."""
        data = {
            "code": self.code,
            "severity": self.severity.value,
            "key": printable(self.key),
            "message": printable(self.message),
            "fix": printable(self.fix),
        }
        return data if self.waived is None else {**data, "waived": printable(self.waived)}


def finding_line(finding: Mapping[str, str]) -> str:
    """`SEVERITY CODE key: message - fix` from a finding's data; a waived one starts with `WAIVED`
    (so `grep ^ERROR` still finds only what blocks) and ends with the waiver's reason."""
    line = f"{finding['severity'].upper()} {finding['code']} {finding['key']}: {finding['message']} - {finding['fix']}"
    if "waived" in finding:
        return f"WAIVED {line} [waived: {finding['waived']}]"
    return line


def by_urgency(findings: Iterable[Finding]) -> list[Finding]:
    """Errors that block first, then warnings, then what waivers set aside; stable within each."""
    return sorted(findings, key=lambda f: (not f.blocks, f.waived is not None))


def tally(findings: Iterable[Finding]) -> str:
    """`2 error(s), 1 warning(s)` (errors that block), with `, 1 waived` when a waiver covers any."""
    found = list(findings)
    errors = sum(f.blocks for f in found)
    warnings = sum(f.severity is Severity.WARNING and f.waived is None for f in found)
    waived = sum(f.waived is not None for f in found)
    return f"{errors} error(s), {warnings} warning(s)" + (f", {waived} waived" if waived else "")


def config_key(*parts: str | int) -> str:
    """`vllm-serving:engine.maxModelLen` from ("engine", "maxModelLen"); list indices as [i]."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return f"{PROJECT}:{text}"


class ConfigError(Exception):
    """A stack that must not be deployed; carries every error finding at once."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        super().__init__(self.render())

    def render(self) -> str:
        lines = [f"stack configuration has {len(self.findings)} error(s):"]
        lines += [f"  {printable(f.key)}: {printable(f.message)}\n    fix: {printable(f.fix)}" for f in self.findings]
        return "\n".join(lines)
