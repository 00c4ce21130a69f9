"""Which findings a stack's waivers set aside: the one decision `vllm-stack` and the program share.

`rules.check` ends here, so every verb and `pulumi preview`/`up` see the same result. A waived
finding keeps its code, severity, message and fix, and gains the waiver's reason
(`Finding.waived`): a waived error no longer blocks, and every view still shows it. A waiver is
itself checked, each problem an error naming its entry (`vllm-serving:waivers[i]`): a code no
table has, a code no waiver may pass (what it guards, `finding_codes.UNWAIVABLE`), and a waiver
that matches no finding of the stack (stale: the stack or the rule changed since it was written).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

import msgspec

from vllm_serving.finding_codes import SECRETS, STAGE_CODES, UNWAIVABLE
from vllm_serving.findings import Finding, Severity, by_urgency, config_key
from vllm_serving.rules.base import Rule
from vllm_serving.rules.exposure import API_KEY_CODES
from vllm_serving.settings.waivers import Waiver

WAIVER_CODES = frozenset(code for code, entry in STAGE_CODES.items() if entry.stage == "waivers")


def code_guards(rules: Iterable[Rule]) -> dict[str, str | None]:
    """Every code a finding can carry -> what it guards (None: nothing a waiver may not pass)."""
    guards: dict[str, str | None] = {rule.code: rule.guards for rule in rules}
    guards |= {code: entry.concern for code, entry in STAGE_CODES.items()}
    # the apiKey secret's value, checked where the program resolves it (rules/exposure.py)
    guards |= dict.fromkeys(API_KEY_CODES, SECRETS)
    return guards


def why_not_waivable(code: str, guards: Mapping[str, str | None]) -> str | None:
    """Why no waiver may set `code` aside; None when one may (or the code is unknown)."""
    concern = guards.get(code)
    return None if concern is None else UNWAIVABLE.get(concern)


def waive(findings: Iterable[Finding], waivers: tuple[Waiver, ...], guards: Mapping[str, str | None]) -> list[Finding]:
    """The findings with the waived ones marked, plus an error for each waiver that cannot stand;
    blocking errors first, waived findings last."""
    found = list(findings)
    problems: list[Finding] = []
    usable: list[tuple[int, Waiver]] = []
    for index, waiver in enumerate(waivers):
        problem = _refused(index, waiver, guards)
        if problem is None:
            usable.append((index, waiver))
        else:
            problems.append(problem)
    used: set[int] = set()
    marked = []
    for finding in found:
        match = _best_match(finding, usable)
        if match is None:
            marked.append(finding)
        else:
            used.add(match[0])
            marked.append(msgspec.structs.replace(finding, waived=match[1].reason))
    problems += [_stale(index, waiver, found) for index, waiver in usable if index not in used]
    return by_urgency(problems + marked)


def _best_match(finding: Finding, usable: list[tuple[int, Waiver]]) -> tuple[int, Waiver] | None:
    """The waiver for this finding: the one naming its key before the one naming its code alone."""
    matching = [(index, w) for index, w in usable if w.code == finding.code and w.key in (None, finding.key)]
    return min(matching, key=lambda item: item[1].key is None, default=None)


def _error(code: str, key: str, message: str, fix: str) -> Finding:
    return Finding(code, Severity.ERROR, key, message, fix)


def _refused(index: int, waiver: Waiver, guards: Mapping[str, str | None]) -> Finding | None:
    at = config_key("waivers", index, "code")
    remove = f"remove vllm-serving:waivers[{index}]"
    if waiver.code not in guards:
        close = difflib.get_close_matches(waiver.code, list(guards), n=3, cutoff=0.6)
        return _error("waiver-code-unknown", at, f"{waiver.code!r} is no finding code",
                      (f"did you mean {', '.join(close)}? " if close else "")
                      + f"write the code as vllm-stack check prints it, or {remove} (docs/rules.md lists every code)")
    why = why_not_waivable(waiver.code, guards)
    if why is None:
        return None
    return _error("waiver-not-waivable", at, f"{waiver.code} cannot be waived: {why}",
                  f"{remove} and fix what {waiver.code} reports (vllm-stack check prints its fix)")


def _stale(index: int, waiver: Waiver, findings: list[Finding]) -> Finding:
    where = sorted({f.key for f in findings if f.code == waiver.code})
    if waiver.key is not None and where:
        return _error("waiver-stale", config_key("waivers", index, "key"),
                      f"waives {waiver.code} at {waiver.key}, but the stack raises it at {', '.join(where)} only",
                      f"set waivers[{index}].key to the key the finding names ({where[0]}), or remove the "
                      "key to cover it at every key")
    at = f" at {waiver.key}" if waiver.key else ""
    return _error("waiver-stale", config_key("waivers", index),
                  f"waives {waiver.code}{at}, but the stack raises no such finding: the waiver went stale "
                  "(the stack or the rule changed since it was written)",
                  f"remove vllm-serving:waivers[{index}] from the stack file")
