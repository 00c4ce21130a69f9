"""Waivers as `rules.check` applies them (the one decision the CLI and the program share): a waived
error stays, marked with its reason, and no longer blocks; a waiver that matches nothing, names no
code, or names a code no waiver may pass is an error naming the entry. Each with its boundary twin."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.paths import DOCS
from tests.stack_builders import stack_values
from vllm_serving.finding_codes import STAGE_CODES, UNWAIVABLE
from vllm_serving.findings import Finding, Severity
from vllm_serving.rules import GUARDS, RULES, check, exposure, host_paths
from vllm_serving.rules.docs import UNWAIVABLE_END, UNWAIVABLE_START, table_in, unwaivable_table
from vllm_serving.rules.exposure import API_KEY_CODES
from vllm_serving.rules.waivers import why_not_waivable
from vllm_serving.settings import SECRET_KEYS
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import resolve

BF16 = {"dtype": "bfloat16"}  # on a V100: dtype-bf16-unsupported, an error at engine.dtype
PATCHED = "our image carries a bf16 patch for sm_70 (OPS-1234)"


def findings(waivers: list[dict[str, Any]], stack: str = "v100", **sections: Any) -> list[Finding]:
    values = stack_values(stack, **sections)
    values["vllm-serving:waivers"] = waivers
    return check(resolve(parse_stack_config(values), stack))


def by_code(found: list[Finding], code: str) -> list[Finding]:
    return [f for f in found if f.code == code]


def test_without_a_waiver_the_error_blocks() -> None:
    found = by_code(findings([], engine=BF16), "dtype-bf16-unsupported")
    assert [(f.severity, f.waived, f.blocks) for f in found] == [(Severity.ERROR, None, True)]


def test_a_waived_error_stays_with_its_reason_and_no_longer_blocks() -> None:
    found = findings([{"code": "dtype-bf16-unsupported", "reason": PATCHED}], engine=BF16)
    waived = by_code(found, "dtype-bf16-unsupported")
    assert [(f.severity, f.key, f.waived, f.blocks) for f in waived] == [
        (Severity.ERROR, "vllm-serving:engine.dtype", PATCHED, False)]
    assert not any(f.blocks for f in found)
    assert found[-1] == waived[0]  # listed after what still needs attention
    assert waived[0].line().startswith("WAIVED ERROR dtype-bf16-unsupported vllm-serving:engine.dtype: ")
    assert waived[0].line().endswith(f"[waived: {PATCHED}]")
    assert waived[0].as_dict()["waived"] == PATCHED


def test_a_waiver_with_the_finding_key_waives_it() -> None:
    found = findings([{"code": "dtype-bf16-unsupported", "reason": PATCHED, "key": "engine.dtype"}], engine=BF16)
    assert [f.waived for f in by_code(found, "dtype-bf16-unsupported")] == [PATCHED]
    assert not any(f.blocks for f in found)


def test_a_waiver_with_another_key_waives_nothing_and_says_where_the_finding_is() -> None:
    # boundary twin of the one above: same code, another key
    found = findings([{"code": "dtype-bf16-unsupported", "reason": PATCHED, "key": "engine.kvCacheDtype"}],
                     engine=BF16)
    assert [f.blocks for f in by_code(found, "dtype-bf16-unsupported")] == [True]
    stale = by_code(found, "waiver-stale")
    assert [(f.severity, f.key) for f in stale] == [(Severity.ERROR, "vllm-serving:waivers[0].key")]
    assert "raises it at vllm-serving:engine.dtype only" in stale[0].message
    assert "set waivers[0].key to the key the finding names (vllm-serving:engine.dtype)" in stale[0].fix


def test_a_keyed_waiver_covers_only_the_item_it_names() -> None:
    # two unknown flags in extraArgs, one finding per item; waive the second item only
    args = {"extraArgs": ["--no-such-flag", "--another-missing-flag"]}
    found = findings([{"code": "extra-arg-unknown", "reason": "a flag from our fork", "key": "engine.extraArgs[1]"}],
                     engine=args)
    unknown = {f.key: f.blocks for f in by_code(found, "extra-arg-unknown")}
    assert unknown == {"vllm-serving:engine.extraArgs[0]": True, "vllm-serving:engine.extraArgs[1]": False}
    assert by_code(found, "waiver-stale") == []


def test_a_waiver_of_the_code_alone_covers_every_key() -> None:
    args = {"extraArgs": ["--no-such-flag", "--another-missing-flag"]}
    found = findings([{"code": "extra-arg-unknown", "reason": "flags from our fork"}], engine=args)
    assert [f.waived for f in by_code(found, "extra-arg-unknown")] == ["flags from our fork"] * 2


def test_the_waiver_naming_the_key_gives_the_reason() -> None:
    found = findings([{"code": "dtype-bf16-unsupported", "reason": "broad"},
                      {"code": "dtype-bf16-unsupported", "reason": "precise", "key": "engine.dtype"}], engine=BF16)
    assert [f.waived for f in by_code(found, "dtype-bf16-unsupported")] == ["precise"]
    # the broad one then matches nothing of its own: stale, named by its index
    assert [f.key for f in by_code(found, "waiver-stale")] == ["vllm-serving:waivers[0]"]


def test_a_waiver_that_matches_nothing_is_a_stale_error() -> None:
    found = findings([{"code": "dtype-bf16-unsupported", "reason": PATCHED}])  # the shipped v100 runs half
    stale = by_code(found, "waiver-stale")
    assert [(f.severity, f.key, f.blocks) for f in stale] == [(Severity.ERROR, "vllm-serving:waivers[0]", True)]
    assert "went stale" in stale[0].message
    assert stale[0].fix == "remove vllm-serving:waivers[0] from the stack file"


def test_a_waived_warning_is_marked_too() -> None:
    found = findings([{"code": "hybrid-triton-below-cc80", "reason": "verified on staging, OPS-77"}])
    assert [(f.severity, f.waived) for f in by_code(found, "hybrid-triton-below-cc80")] == [
        (Severity.WARNING, "verified on staging, OPS-77")]


@pytest.mark.parametrize(("code", "why"), [
    ("api-open-on-network", UNWAIVABLE["exposure"]),
    ("host-path-system", UNWAIVABLE["host paths"]),
    ("extra-arg-secret", UNWAIVABLE["secrets"]),
    ("registry-password-missing", UNWAIVABLE["secrets"]),
    ("api-key-short", UNWAIVABLE["secrets"]),
    ("config-secret-plaintext", UNWAIVABLE["secrets"]),
    ("stack-file-alias", UNWAIVABLE["stack file"]),
    ("release-fingerprint-mismatch", UNWAIVABLE["promotion"]),
    ("waiver-stale", UNWAIVABLE["waivers"]),
])
def test_an_unwaivable_code_is_refused_naming_it_and_why(code: str, why: str) -> None:
    found = findings([{"code": code, "reason": "we accept the risk"}])
    refused = by_code(found, "waiver-not-waivable")
    assert [(f.key, f.blocks) for f in refused] == [("vllm-serving:waivers[0].code", True)]
    assert refused[0].message == f"{code} cannot be waived: {why}"
    assert "remove vllm-serving:waivers[0]" in refused[0].fix


def test_an_exposure_finding_the_stack_raises_stays_a_warning_when_a_waiver_tries() -> None:
    # the shipped v100 binds 0.0.0.0 without an API key: the warning is not marked waived
    found = findings([{"code": "api-open-on-network", "reason": "firewalled"}])
    assert [f.waived for f in by_code(found, "api-open-on-network")] == [None]
    assert by_code(found, "waiver-stale") == []  # refused, not also stale


def test_an_unknown_code_is_refused_with_the_closest_codes() -> None:
    found = findings([{"code": "tool-parser-unknwn", "reason": "typo"}])
    unknown = by_code(found, "waiver-code-unknown")
    assert [f.key for f in unknown] == ["vllm-serving:waivers[0].code"]
    assert unknown[0].fix.startswith("did you mean tool-parser-unknown")
    assert unknown[0].message == "'tool-parser-unknwn' is no finding code"


def test_an_unknown_code_with_nothing_close_says_where_the_codes_are() -> None:
    (unknown,) = by_code(findings([{"code": "no-such-code", "reason": "r"}]), "waiver-code-unknown")
    assert (unknown.message, unknown.fix) == (
        "'no-such-code' is no finding code",
        "write the code as vllm-stack check prints it, or remove vllm-serving:waivers[0] (docs/rules.md lists "
        "every code)")


def test_every_problem_of_the_waivers_at_once() -> None:
    found = findings([{"code": "host-path-dotdot", "reason": "r"}, {"code": "no-such-code", "reason": "r"},
                      {"code": "tp-heads-indivisible", "reason": "r"}])
    assert {f.key: f.code for f in found if f.code.startswith("waiver-")} == {
        "vllm-serving:waivers[0].code": "waiver-not-waivable", "vllm-serving:waivers[1].code": "waiver-code-unknown",
        "vllm-serving:waivers[2]": "waiver-stale"}


# What no waiver may pass, from signals other than the `guards` the rules declare: the module a rule
# lives in, the key it names, the words of its code and description.
_SECRET_WORDS = re.compile(r"secret|password|api.?key|hf.?token")
_EXPOSURE_KEYS = {"vllm-serving:network.bindAddress", "vllm-serving:network.behindProxy",
                  "vllm-serving:kubernetes.service.type"}
_HOST_PATH_KEY = re.compile(r"hostPath|containerPath")


def _must_be_unwaivable() -> set[str]:
    codes = {rule.code for rule in (*host_paths.RULES, *exposure.RULES)}
    codes |= set(API_KEY_CODES) | set(STAGE_CODES)  # a stack that cannot be read, built or promoted
    for rule in RULES:
        text = f"{rule.code} {rule.key} {rule.what}".lower()
        if (_SECRET_WORDS.search(text) or rule.key.split(":")[-1] in SECRET_KEYS
                or rule.key in _EXPOSURE_KEYS or _HOST_PATH_KEY.search(rule.key)):
            codes.add(rule.code)
    return codes


def test_every_host_path_exposure_secret_and_stack_file_code_is_unwaivable() -> None:
    must = _must_be_unwaivable()
    assert {"host-path-system", "api-open-on-network", "extra-arg-secret", "registry-password-missing",
            "stack-file", "config-secret-not-ciphertext", "api-key-empty"} <= must  # the signals work
    assert {code for code in must if why_not_waivable(code, GUARDS) is None} == set()


def test_a_fact_about_vllm_or_the_hardware_can_be_waived() -> None:
    for code in ("dtype-bf16-unsupported", "tool-parser-unknown", "kv-cache-too-small", "tp-heads-indivisible",
                 "extra-arg-unknown", "quantization-cc-too-low", "image-cuda13-volta"):
        assert why_not_waivable(code, GUARDS) is None, code


def test_every_guard_is_a_known_concern() -> None:
    assert {g for g in GUARDS.values() if g is not None} <= set(UNWAIVABLE)


def test_docs_list_what_cannot_be_waived() -> None:
    doc = (DOCS / "rules.md").read_text(encoding="utf-8")
    assert table_in(doc, UNWAIVABLE_START, UNWAIVABLE_END) == unwaivable_table(), \
        "docs/rules.md is stale: uv run python -m vllm_serving.rules.docs"


@pytest.mark.parametrize(("extra_args", "code"), [
    (["--trust-remote-code"], "extra-arg-typed-key"),  # remote code, past engine.trustRemoteCode's review
    (["--host", "0.0.0.0"], "extra-arg-typed-key"),  # the API's address, past network.bindAddress
    (["--trust-rem"], "extra-arg-typed-key"),  # an abbreviation argparse takes
    (["--config", "/data/models/Qwen3.5-27B/serve.yaml"], "extra-arg-forbidden"),  # flags from a file in the weights
])
def test_a_waiver_never_passes_a_flag_that_skips_the_checks(extra_args: list[str], code: str) -> None:
    found = findings([{"code": code, "reason": "we need it, OPS-9"}], engine={"extraArgs": extra_args})
    assert [(f.waived, f.blocks) for f in by_code(found, code)] == [(None, True)]
    assert [f.message for f in by_code(found, "waiver-not-waivable")] == [
        f"{code} cannot be waived: {UNWAIVABLE['checked flags']}"]


def test_an_unknown_flag_in_extra_args_can_still_be_waived() -> None:
    # boundary twin: a flag this project's table may lack (a plugin's) is a fact about vLLM
    found = findings([{"code": "extra-arg-unknown", "reason": "our plugin adds it, OPS-9"}],
                     engine={"extraArgs": ["--our-plugin-flag", "1"]})
    assert [(f.waived, f.blocks) for f in by_code(found, "extra-arg-unknown")] == [("our plugin adds it, OPS-9", False)]
