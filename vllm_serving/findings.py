"""What the checks report: one finding per problem, naming the config key and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

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
        """`SEVERITY CODE key: message - fix`, the CLI's one-line form."""
        return f"{self.severity.value.upper()} {self.code} {self.key}: {self.message} - {self.fix}"

    def as_dict(self) -> dict[str, str]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "key": self.key,
            "message": self.message,
            "fix": self.fix,
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
        lines += [f"  {f.key}: {f.message}\n    fix: {f.fix}" for f in self.findings]
        return "\n".join(lines)
