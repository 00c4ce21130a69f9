"""What the checks report: one finding per problem, naming the config key and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from vllm_serving.terminal_text import printable

PROJECT = "vllm-serving"


class Severity(StrEnum):
    ERROR = "error"  # blocks the deployment
    WARNING = "warning"  # printed, and logged under Pulumi


@dataclass(frozen=True)
class Finding:
    """One problem with a stack: stable code, severity, the config key, what is wrong and the fix."""

    code: str
    severity: Severity
    key: str
    message: str
    fix: str

    def line(self) -> str:
        """`SEVERITY CODE key: message - fix`, the CLI's one-line form: one line whatever the
        texts hold (a key or a quoted value from a file may hold line breaks and escapes)."""
        return printable(f"{self.severity.value.upper()} {self.code} {self.key}: {self.message} - {self.fix}")

    def as_dict(self) -> dict[str, str]:
        """The finding for JSON, its texts inert as in `line()`: consumers print them."""
        return {
            "code": self.code,
            "severity": self.severity.value,
            "key": printable(self.key),
            "message": printable(self.message),
            "fix": printable(self.fix),
        }


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
