"""Config keys under a misspelt project namespace (`vllm-servng:network`, `vllm_serving:engine`).

Pulumi hands each program only its own namespace's keys, so such a key is dropped without a word:
`vllm-servng:network` with `bindAddress: 127.0.0.1` would leave the API on 0.0.0.0. A namespace
within `MAX_EDITS` edits of the project's (or equal to it but for case and punctuation) is an error
naming the key and its correct spelling. Provider namespaces (`docker`, `kubernetes`) are far away.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from vllm_serving.findings import PROJECT, Finding, Severity

MAX_EDITS = 2
_PUNCTUATION = re.compile(r"[^a-z0-9]")
_PROJECT_LETTERS = frozenset(PROJECT)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance counting a swap of two neighbouring letters as one edit."""
    rows = [list(range(len(b) + 1))]
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            best = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                best = min(best, rows[-2][j - 2] + 1)
            row.append(best)
        rows.append(row)
    return rows[-1][-1]


def is_misspelt_project(namespace: str) -> bool:
    """Whether `namespace` is meant to be the project's but is not spelt as Pulumi needs it."""
    if namespace == PROJECT or not namespace:
        return False
    folded = _PUNCTUATION.sub("", namespace.lower())
    if folded == _PUNCTUATION.sub("", PROJECT):
        return True
    lowered = namespace.lower()
    # cheap filters before the quadratic distance (a hostile file may hold thousands of namespaces):
    # each edit changes the length by at most 1 and the letter counts by at most 2
    if abs(len(lowered) - len(PROJECT)) > MAX_EDITS:
        return False
    # each edit adds or drops at most one distinct letter, a substitution one of each: a set
    # difference is far cheaper than the letter counts below (8,000 namespaces took 3 s)
    if len(set(lowered) ^ _PROJECT_LETTERS) > 2 * MAX_EDITS:
        return False
    counts, project = Counter(lowered), Counter(PROJECT)
    if sum(((counts - project) + (project - counts)).values()) > 2 * MAX_EDITS:
        return False
    return edit_distance(lowered, PROJECT) <= MAX_EDITS


def namespace_findings(keys: Iterable[str]) -> list[Finding]:
    """One error per config key whose namespace is a misspelling of the project's."""
    split = [(key, *key.partition(":")) for key in keys]
    # each namespace once: a file's keys share a handful of them
    misspelt = {ns for ns in {ns for _, ns, colon, _ in split if colon} if is_misspelt_project(ns)}
    return [Finding("config-namespace-misspelt", Severity.ERROR, key,
                    f"namespace '{namespace[:40]}' is not '{PROJECT}'{_look_alike(namespace)}: Pulumi passes "
                    "this key to no program, so its settings would be silently ignored",
                    f"rename the key to {PROJECT}:{name[:40]}")
            for key, namespace, colon, name in split if colon and namespace in misspelt]


def _look_alike(namespace: str) -> str:
    """A namespace that reads as the project's: say which character differs."""
    foreign = next((c for c in namespace if ord(c) > 127), None)
    if foreign is None:
        return ""
    return f" (it holds {foreign!r}, U+{ord(foreign):04X} {unicodedata.name(foreign, 'unnamed')}, not an ASCII letter)"


def corrected(values: dict[str, object]) -> dict[str, object]:
    """`values` with each misspelt project namespace spelt right, where the right key is not
    set too: what the author meant, for the findings about the rest of the stack."""
    out = dict(values)
    for key in values:
        namespace, colon, name = key.partition(":")
        if colon and is_misspelt_project(namespace) and f"{PROJECT}:{name}" not in out:
            out[f"{PROJECT}:{name}"] = out.pop(key)
    return out
