"""Every finding code the package can raise is documented: a rule's in the rule table, the others
(stack file, settings, catalog, promotion, backend objects) in vllm_serving/finding_codes.py, and
both tables in docs/rules.md."""

from __future__ import annotations

import ast
import re
from functools import cache

import pytest
from pydantic import BaseModel

from tests.paths import DOCS, ROOT
from tests.python_source import parse_source
from vllm_serving.finding_codes import CHECKED_FLAGS, EXPOSURE, HOST_PATHS, SECRETS, STAGE_CODES, UNWAIVABLE
from vllm_serving.rules import RULES
from vllm_serving.rules.docs import (
    STAGE_END,
    STAGE_START,
    UNWAIVABLE_END,
    UNWAIVABLE_START,
    stage_codes_table,
    table_in,
    unwaivable_table,
)
from vllm_serving.settings import SECRET_KEYS, StackSettings

CODE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")
RAISER = re.compile(r"Finding|error|Refused|finding")
# codes the rules raise outside the rule table: the apiKey value, checked by the program
DOCUMENTED_BY_HAND = {"api-key-empty", "api-key-short", "api-key-whitespace"}


@cache  # one scan of the package for every test here
def raised_codes() -> dict[str, set[str]]:
    """Kebab-case string literals passed first to a Finding-making call, with where they are."""
    found: dict[str, set[str]] = {}
    for path in (ROOT / "vllm_serving").rglob("*.py"):
        for node in ast.walk(parse_source(path)):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            value = node.args[0].value
            if RAISER.search(name) and isinstance(value, str) and CODE.match(value):
                found.setdefault(value, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_raised_code_is_in_a_table() -> None:
    known = {rule.code for rule in RULES} | STAGE_CODES.keys() | DOCUMENTED_BY_HAND
    missing = {code: where for code, where in raised_codes().items() if code not in known}
    assert not missing, f"document these in vllm_serving/finding_codes.py: {missing}"


def test_the_scan_finds_the_stages_codes() -> None:
    # the scan itself works: every stage code is raised somewhere (none is a dead entry)
    assert set(STAGE_CODES) <= set(raised_codes())


def test_docs_list_the_stage_codes() -> None:
    doc = (DOCS / "rules.md").read_text(encoding="utf-8")
    assert table_in(doc, STAGE_START, STAGE_END) == stage_codes_table(), \
        "docs/rules.md is stale: uv run python -m vllm_serving.rules.docs"
    # why no waiver passes each concern, as the message of `waiver-not-waivable` says it
    assert table_in(doc, UNWAIVABLE_START, UNWAIVABLE_END) == unwaivable_table()
    for code in DOCUMENTED_BY_HAND:
        assert f"`{code}`" in doc


# Where each stage runs, by the modules that raise its codes (not by the table under test)
STAGE_MODULES = {
    "stack file": ("vllm_serving/stack_files/", "vllm_serving/spec.py"),  # spec.py: a STACK argument's name
    "settings": ("vllm_serving/settings/",),
    "catalog": ("vllm_serving/catalog/", "vllm_serving/spec.py"),  # spec.py joins the stack with the catalogs
    "promotion": ("vllm_serving/release/", "vllm_serving/stack_files/loader.py"),  # the loader follows promoteFrom
    "backend objects": ("vllm_serving/render/kubernetes/",),
    "waivers": ("vllm_serving/rules/waivers.py",),
}


def test_each_code_is_in_the_stage_that_raises_it() -> None:
    raised = raised_codes()
    wrong = {code: (entry.stage, sorted(raised[code])) for code, entry in STAGE_CODES.items()
             if not all(path.startswith(STAGE_MODULES[entry.stage]) for path in raised[code])}
    assert not wrong, f"stage of these codes is not where they are raised: {wrong}"


def test_no_waiver_sets_aside_a_stack_that_cannot_be_read_built_or_promoted() -> None:
    # every stage code stops the stack before the rules could judge it (module doc), so each
    # concern is one no waiver passes; the secret codes say so as secrets (the fix is `--secret`)
    assert {code for code, entry in STAGE_CODES.items() if entry.concern not in UNWAIVABLE} == set()
    assert {code for code, entry in STAGE_CODES.items() if entry.concern == SECRETS} == {
        "config-secret-not-ciphertext", "config-secret-plaintext", "config-secret-in-section"}


@pytest.mark.parametrize(("concern", "code"), [
    (HOST_PATHS, "host-path-system"),  # a mount over /etc, /usr, ... of the host
    (EXPOSURE, "api-open-on-network"),  # the API on 0.0.0.0 without a key
    (SECRETS, "extra-arg-secret"),  # --api-key in engine.extraArgs
    (CHECKED_FLAGS, "extra-arg-typed-key"),  # --trust-remote-code past engine.trustRemoteCode
])
def test_the_concerns_the_rules_guard_are_unwaivable(concern: str, code: str) -> None:
    assert [rule.guards for rule in RULES if rule.code == code] == [concern]
    assert UNWAIVABLE.get(concern)


def _is_setting(dotted: str) -> bool:
    """`network.bindAddress` names a field of the stack's settings (camelCase, as in YAML)."""
    model: type[BaseModel] = StackSettings
    *sections, leaf = dotted.split(".")
    for name in sections:
        fields = {f.alias: f.annotation for f in model.model_fields.values()}
        section = fields.get(name)
        if not (isinstance(section, type) and issubclass(section, BaseModel)):
            return False
        model = section
    return leaf in {f.alias for f in model.model_fields.values()}


def test_why_no_waiver_passes_a_concern_names_the_keys_that_fix_it() -> None:
    # the message of `waiver-not-waivable` sends the user to these keys: each must be one they can set
    named = {concern: re.findall(r"\b[a-z]+\.[a-z][A-Za-z]+\b", why) for concern, why in UNWAIVABLE.items()}
    assert named[EXPOSURE] == ["network.bindAddress", "network.behindProxy", "container.privileged"]
    assert named[CHECKED_FLAGS] == ["engine.extraArgs"]
    assert [key for keys in named.values() for key in keys if not _is_setting(key)] == []
    assert "the apiKey secret" in UNWAIVABLE[EXPOSURE] and "apiKey" in SECRET_KEYS
    assert "`pulumi config set --secret`" in UNWAIVABLE[SECRETS]
