"""The edges of the findings' wording, each written out from the rule it states: where a hint
starts and stops applying (a percentage between 10 and 100, a fraction with vLLM's binary suffix,
an item of 4096 characters), what a key's odd character is called, and the texts of findings the
catalogue in test_error_messages.py does not reach (label values, endpoints, control characters)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pydantic import ValidationError

from tests.settings.minimal_stack import parse_minimal
from vllm_serving.findings import ConfigError, Finding
from vllm_serving.settings.config_hints import spoken_kind
from vllm_serving.settings.engine import MAX_EXTRA_ARG_CHARS, EngineSettings

PROJECT = "vllm-serving"
GMU_DOC = "(Share of each GPU's memory vLLM may use (`--gpu-memory-utilization`), in (0, 1].)"


def _one(key: str, **sections: Any) -> Finding:
    with pytest.raises(ConfigError) as caught:
        parse_minimal(**sections)
    found = {f.key: f for f in caught.value.findings}
    assert f"{PROJECT}:{key}" in found, found
    return found[f"{PROJECT}:{key}"]


@pytest.mark.parametrize(("value", "fix"), [
    # a share of 1 written as a percentage: 10 to 100 read as 0.1 to 1; below 10 is no percentage anyone writes
    (10, "write 0.1 (a share of 1, not a percentage)"), (100, "write 1 (a share of 1, not a percentage)"),
    (9, "write a value at most 1.0"), (101, "write a value at most 1.0"),
])
def test_a_percentage_hint_holds_from_10_to_100_only(value: int, fix: str) -> None:
    f = _one("engine.gpuMemoryUtilization", engine={"gpuMemoryUtilization": value})
    assert (f.code, f.message, f.fix) == ("config-range", f"{value} is out of range", f"{fix} {GMU_DOC}")


def test_a_fraction_with_vllm_s_binary_suffix_is_refused_as_vllm_refuses_it() -> None:
    # vllm/engine/arg_utils.py human_readable_int (v0.19.1): "Decimals are not allowed with binary
    # suffixes like K. Did you mean to use 1.5k instead?"
    f = _one("engine.maxModelLen", engine={"maxModelLen": "1.5K"})
    assert f.fix.startswith("write a whole number: vLLM refuses 1.5K (no fraction with a binary suffix such as K); "
                            "1.5k would be 1500 (")


def test_vllm_s_binary_shorthand_names_its_decimal_twin() -> None:
    f = _one("engine.maxModelLen", engine={"maxModelLen": "32K"})
    assert f.fix.startswith("write the whole number 32768 (32K in vLLM's shorthand, where 32k would be 32000; "
                            "the config takes digits only)")


@pytest.mark.parametrize(("key", "says"), [
    # DEL prints as nothing, so the key looks right: name it as the control character it is
    ("max\x7fModelLen", ": it contains the control character '\\x7f' (U+007F unnamed character)"),
    ("max\x80ModelLen", ": it contains the non-ASCII character '\\x80' (U+0080 unnamed character)"),
    ("max~ModelLen", ""),  # the last printable ASCII character is nothing odd
])
def test_an_odd_character_in_a_key_is_named_by_what_it_is(key: str, says: str) -> None:
    f = _one(f"engine.{key}", engine={key: 1})
    assert f.message == f"unknown key {key!r}{says}"
    assert f.fix == "did you mean 'maxModelLen'? rename the key"


def test_a_key_with_an_extra_leading_letter_is_a_typo_not_a_spelling() -> None:
    # only dashes (vLLM's --flag) are dropped before comparing spellings, not letters
    f = _one("engine.XmaxModelLen", engine={"XmaxModelLen": 1})
    assert f.fix == "did you mean 'maxModelLen'? rename the key"


def test_an_unknown_nested_key_with_no_close_match_lists_that_section_s_keys() -> None:
    f = _one("engine.zzzzqqqq", engine={"zzzzqqqq": 1})
    assert f.fix.startswith("remove it; known keys here: tensorParallelSize, pipelineParallelSize, dataParallelSize, ")
    assert f.fix.endswith(", extraArgs, env")


@pytest.mark.parametrize(("value", "spoken"), [
    (None, "nothing"), (True, "the boolean true"), (0.5, "the number 0.5"), ("x", "text"), ((1,), "a list"),
    ({"a": 1}, "a mapping"),
    # YAML 1.1 reads an unquoted 2024-01-01 as a date
    (datetime.date(2024, 1, 1), "a date"),
])
def test_a_value_is_spoken_of_in_the_stack_file_s_words(value: object, spoken: str) -> None:
    assert spoken_kind(value) == spoken


def test_an_unquoted_date_for_a_section_is_called_a_date() -> None:
    f = _one("engine", engine=datetime.date(2024, 1, 1))
    assert f.message == "must be a mapping of keys, got a date"


def test_a_json_object_indented_in_quotes_is_still_json_text() -> None:
    f = _one("engine.speculativeConfig", engine={"speculativeConfig": '  {"method": "mtp"}'})
    assert f.message == "is JSON text, not YAML keys"


def test_a_yaml_boolean_for_a_choice_names_the_word_it_stands_for_or_lists_the_choices() -> None:
    f = _one("container.restart", container={"restart": False})
    assert f.fix == "write 'no' in quotes: YAML reads an unquoted no as the boolean false"
    f = _one("engine.dtype", engine={"dtype": True})
    assert f.fix == "write one of 'auto', 'half', 'float16', 'bfloat16', 'float' or 'float32'"


def test_a_bad_label_value_names_its_key_and_the_form() -> None:
    f = _one("kubernetes.nodeSelector", target={"kind": "kubernetes"},
             kubernetes={"nodeSelector": {"nvidia.com/gpu.product": "bad value!"}})
    assert (f.message, f.fix) == (
        "nodeSelector value 'bad value!' for nvidia.com/gpu.product is not a Kubernetes label value",
        "use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")


@pytest.mark.parametrize(("endpoint", "message", "fix"), [
    ("tcp://gpu01:2375", "'tcp://gpu01:2375' is the Docker API over plain tcp://: anyone who reaches the port controls "
     "the host, and the registry password crosses the network in clear",
     "write ssh://user@host (the daemon stays on its local socket)"),
    # the scheme is what comes before the first '://', whatever the rest holds
    ("tcp://gpu01:2375/ssh://x", "'tcp://gpu01:2375/ssh://x' is the Docker API over plain tcp://: anyone who reaches "
     "the port controls the host, and the registry password crosses the network in clear",
     "write ssh://user@host (the daemon stays on its local socket)"),
    ("http://gpu01", "'http://gpu01' is not a Docker endpoint",
     "write ssh://user@host (remote) or unix:///var/run/docker.sock (local)"),
])
def test_a_docker_endpoint_off_the_safe_schemes_says_why(endpoint: str, message: str, fix: str) -> None:
    f = _one("target.dockerHost", target={"dockerHost": endpoint})
    assert (f.message, f.fix) == (message, fix)


def test_a_parser_name_of_the_wrong_form_says_how_vllm_names_it() -> None:
    f = _one("engine.reasoningParser", engine={"reasoningParser": "bad name!"})
    assert (f.message, f.fix) == ("'bad name!' is not a parser or method name",
                                  "write the name as vLLM registers it, e.g. qwen3 or qwen3_coder")


@pytest.mark.parametrize(("section", "key", "item", "shown"), [
    ("engine", "engine.extraArgs[0]", "--x\x07" + "y" * 60, "engine.extraArgs item " + repr("--x\x07" + "y" * 36)),
    ("target", "target.sshOpts[0]", "-oPort=22\x07", "ssh option '-oPort=22\\x07'"),
])
def test_a_control_character_in_a_list_item_is_shown_escaped(section: str, key: str, item: str, shown: str) -> None:
    sections = ({"engine": {"extraArgs": [item]}} if section == "engine"
                else {"target": {"dockerHost": "ssh://d@gpu", "sshOpts": [item]}})
    f = _one(key, **sections)
    assert (f.message, f.fix) == (f"{shown} contains a control character (a newline, tab or NUL)",
                                  "write it on one line, without control characters")


def test_an_extra_args_item_may_be_as_long_as_the_cap_and_no_longer() -> None:
    assert parse_minimal(engine={"extraArgs": ["a" * MAX_EXTRA_ARG_CHARS]}).engine.extra_args
    f = _one("engine.extraArgs[0]", engine={"extraArgs": ["a" * (MAX_EXTRA_ARG_CHARS + 1)]})
    assert (f.message, f.fix) == (f"an engine.extraArgs item of 4097 characters ({'a' * 40!r}...)",
                                  "keep each item to at most 4096 characters")


def test_a_settings_model_validated_alone_reads_the_finding_s_message() -> None:
    # pydantic renders a custom error from its template: the message must be the finding's own text
    with pytest.raises(ValidationError) as caught:
        EngineSettings.model_validate({"reasoningParser": "bad name!"})
    (error,) = caught.value.errors()
    assert error["msg"] == "'bad name!' is not a parser or method name"
