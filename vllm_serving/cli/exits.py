"""One exit-code policy for every verb, and its errors as JSON under `--json`.

- 0: done, and nothing is wrong;
- 1: the answer is no: findings with an error (check, plan, capacity, a stack init wrote), two
  stacks that differ (diff), a model that does not fit the GPUs (init), a check that failed (smoke);
- 2: input the verb cannot use: a bad argument or flag (with the verb's own usage), a stack file
  that cannot be read (missing - with the closest names -, not YAML, no `config:`), a file it may
  not write, or the tool's own failure.

An error is one line per problem on stderr; under `--json` also a JSON object on stdout
(`{"verb": ..., "error": ..., "findings": [...]}`), so a script reading stdout always gets JSON
and a CI log that captures stdout still shows what went wrong.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from vllm_serving.findings import Finding

OK, FINDINGS, UNUSABLE = 0, 1, 2
UNREADABLE_CODES = frozenset({"stack-file", "stack-file-too-large"})
"""The finding codes of a stack file that cannot be read as one (stack_files/loader.py and
strict_yaml.py: missing, not a file, not YAML, no `config:`, too large); a file read but refused
in part (an alias, a duplicate key) has findings like any other."""


class Unusable(Exception):
    """An argument or input a verb cannot use; the message says what to give instead (exit 2)."""


def unreadable(findings: Sequence[Finding]) -> bool:
    """Whether a stack could not be read at all (rather than read, with findings)."""
    return any(f.code in UNREADABLE_CODES for f in findings)


def exit_code(findings: Sequence[Finding]) -> int:
    """2 when a stack could not be read, else 1: the code for a ConfigError's findings."""
    return UNUSABLE if unreadable(findings) else FINDINGS


def error_json(verb: str | None, message: str, findings: Sequence[Finding] = (), usage: str | None = None) -> str:
    """The JSON object of an error, one layout for every verb and for a bad argument (with `usage`)."""
    return json.dumps({"verb": verb, "error": message, **({"usage": usage} if usage is not None else {}),
                       "findings": [f.as_dict() for f in findings]}, indent=2)


def print_error(verb: str, message: str | None, as_json: bool, findings: Sequence[Finding] = ()) -> None:
    """An error the way the verb's output is read: lines on stderr, and a JSON object on stdout."""
    if as_json:
        print(error_json(verb, message or "; ".join(f"{f.key}: {f.message}" for f in findings), findings))
    if message:
        print(f"vllm-stack {verb}: {message}", file=sys.stderr)
    for finding in findings:
        print(finding.line(), file=sys.stderr)
