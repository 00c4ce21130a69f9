"""`vllm-serving:waivers`: the form of each entry, each error naming `waivers[i].field` and the fix."""

from __future__ import annotations

from typing import Any

import pytest

from tests.settings.minimal_stack import parse_minimal
from vllm_serving.findings import ConfigError

REASON = "the plugin image registers this parser (OPS-1234)"


def _errors(waivers: Any) -> dict[str, str]:
    with pytest.raises(ConfigError) as exc:
        parse_minimal(waivers=waivers)
    return {f.key: f"{f.code} | {f.message} | {f.fix}" for f in exc.value.findings}


def test_a_waiver_is_read_with_its_key_in_full() -> None:
    settings = parse_minimal(waivers=[
        {"code": "tool-parser-unknown", "reason": REASON, "key": "engine.toolCallParser"},
        {"code": "kv-cache-too-small", "reason": "measured on the host", "key": "vllm-serving:engine.maxModelLen"},
        {"code": "dtype-bf16-unsupported", "reason": "patched image"},
    ])
    assert [(w.code, w.key) for w in settings.waivers] == [
        ("tool-parser-unknown", "vllm-serving:engine.toolCallParser"),
        ("kv-cache-too-small", "vllm-serving:engine.maxModelLen"),
        ("dtype-bf16-unsupported", None),
    ]
    assert settings.waivers[0].reason == REASON


def test_no_waivers_by_default() -> None:
    assert parse_minimal().waivers == ()


def test_the_reason_is_required_and_named_by_its_index() -> None:
    errors = _errors([{"code": "tool-parser-unknown", "reason": REASON}, {"code": "kv-cache-too-small"}])
    assert list(errors) == ["vllm-serving:waivers[1].reason"]
    assert errors["vllm-serving:waivers[1].reason"].startswith("config-missing |")
    assert "pulumi config set --path 'waivers[1].reason'" in errors["vllm-serving:waivers[1].reason"]


@pytest.mark.parametrize(("reason", "words"), [
    ("", "blank"),
    ("   ", "blank"),
    ("fine\nrm -rf /", "control character"),
    ("x" * 501, "501 characters"),
])
def test_a_reason_must_say_something_on_one_line(reason: str, words: str) -> None:
    errors = _errors([{"code": "tool-parser-unknown", "reason": reason}])
    assert list(errors) == ["vllm-serving:waivers[0].reason"]
    assert words in errors["vllm-serving:waivers[0].reason"]


def test_the_longest_reason_passes() -> None:
    # boundary twin of the 501-character reason
    assert len(parse_minimal(waivers=[{"code": "a-b", "reason": "x" * 500}]).waivers[0].reason) == 500


@pytest.mark.parametrize("code", ["Tool Parser Unknown", "tool_parser_unknown", "toolparser", "-a-b", "a-b\n"])
def test_a_code_has_the_form_check_prints(code: str) -> None:
    errors = _errors([{"code": code, "reason": REASON}])
    assert list(errors) == ["vllm-serving:waivers[0].code"]
    assert "as vllm-stack check prints it" in errors["vllm-serving:waivers[0].code"]


@pytest.mark.parametrize("key", ["engine dtype", "engine..dtype", "vllm-serving:", ".engine", "engine.dtype\n"])
def test_a_key_has_the_form_findings_name(key: str) -> None:
    errors = _errors([{"code": "tool-parser-unknown", "reason": REASON, "key": key}])
    assert list(errors) == ["vllm-serving:waivers[0].key"]
    assert "leave key out" in errors["vllm-serving:waivers[0].key"]


@pytest.mark.parametrize("key", ["engine.env.VLLM_CPU_KVCACHE_SPACE", "engine.extraArgs[3]",
                                 "target.hosts[1].deviceIds"])
def test_keys_of_list_items_and_env_names_are_keys(key: str) -> None:
    waiver = parse_minimal(waivers=[{"code": "a-b", "reason": REASON, "key": key}]).waivers[0]
    assert waiver.key == f"vllm-serving:{key}"


def test_the_same_code_and_key_twice_is_refused_at_the_second() -> None:
    errors = _errors([{"code": "a-b", "reason": REASON}, {"code": "c-d", "reason": REASON},
                      {"code": "a-b", "reason": "again"}])
    assert list(errors) == ["vllm-serving:waivers[2]"]
    assert "waivers[0] already does" in errors["vllm-serving:waivers[2]"]


def test_the_same_code_at_two_keys_is_two_waivers() -> None:
    # boundary twin of the repeat: another key is another waiver, and so is the code alone
    settings = parse_minimal(waivers=[{"code": "a-b", "reason": REASON, "key": "engine.extraArgs[0]"},
                                      {"code": "a-b", "reason": REASON, "key": "engine.extraArgs[1]"},
                                      {"code": "a-b", "reason": REASON}])
    assert len(settings.waivers) == 3


def test_an_unknown_field_of_a_waiver_is_named() -> None:
    errors = _errors([{"code": "a-b", "reason": REASON, "keys": "engine.dtype"}])
    assert list(errors) == ["vllm-serving:waivers[0].keys"]
    assert "key" in errors["vllm-serving:waivers[0].keys"]


def test_waivers_are_a_list() -> None:
    errors = _errors({"code": "a-b", "reason": REASON})
    assert list(errors) == ["vllm-serving:waivers"]
    assert "list" in errors["vllm-serving:waivers"]
