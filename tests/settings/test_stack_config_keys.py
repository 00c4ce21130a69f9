"""Which config keys a stack's settings are read from, as Pulumi names them, and what becomes of
the secret ones: the program's config and the offline `check` both come through
`parse_stack_config`, so a key it skips is a setting silently dropped."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tests.settings.minimal_stack import BASE
from vllm_serving.findings import ConfigError, Finding, Severity
from vllm_serving.settings import HardwareSettings, StackSettings
from vllm_serving.settings.stack_config import parse_stack_config, section_error

PROJECT = "vllm-serving"
FULL = {f"{PROJECT}:{k}": v for k, v in BASE.items()}
KEEP_SECRETS = ("write {} in plain text and keep secrets in registryPassword, apiKey, hfToken "
                "(pulumi config set --secret KEY)")


def _findings(values: dict[str, Any], secrets: frozenset[str] = frozenset()) -> list[Finding]:
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values, secrets)
    return list(caught.value.findings)


def test_bare_keys_read_as_the_project_s_own() -> None:
    # the offline reader may hand keys without the namespace: they are the project's
    settings = parse_stack_config(dict(BASE))
    assert (settings.hardware.gpu, settings.hardware.count) == ("A100-80GB", 2)


def test_another_namespace_s_keys_are_skipped_wherever_they_stand() -> None:
    # provider settings (docker:host, kubernetes:context) are Pulumi's, before or after ours
    values = {"docker:host": "ssh://x@y", **FULL, "kubernetes:context": "prod"}
    assert parse_stack_config(values).hardware.count == 2


def test_the_old_namespace_config_name_form_is_read_as_pulumi_reads_it() -> None:
    # pulumi's config.ParseKey: `ns:config:name` is the compatible spelling of `ns:name`
    values = {f"{PROJECT}:config:hardware": BASE["hardware"], **{k: v for k, v in FULL.items() if "hardware" not in k}}
    assert parse_stack_config(values).hardware.gpu == "A100-80GB"


def test_a_key_with_a_second_colon_is_an_unknown_key_of_the_project() -> None:
    (found,) = _findings({**FULL, f"{PROJECT}:engine:x": 1})
    assert (found.key, found.message) == (f"{PROJECT}:engine:x", "unknown config key 'engine:x'")
    assert found.fix == f"did you mean '{PROJECT}:engine'? rename the key"


@pytest.mark.parametrize("written", [f"{PROJECT}:apiKey", "apiKey"])
def test_a_secret_held_as_secret_is_recorded_as_set_and_never_read(written: str) -> None:
    settings = parse_stack_config({**FULL, written: "sk-held"}, frozenset({written}))
    assert settings.secrets_set == frozenset({"apiKey"})
    assert "sk-held" not in repr(settings)


def test_a_secret_key_left_empty_is_not_set() -> None:
    settings = parse_stack_config({**FULL, "apiKey": "sk", "hfToken": "", "registryPassword": None},
                                  frozenset({"apiKey", "hfToken", "registryPassword"}))
    assert settings.secrets_set == frozenset({"apiKey"})


def test_a_secret_in_plain_text_is_refused_with_the_command_that_fixes_it() -> None:
    (found,) = _findings({**FULL, f"{PROJECT}:apiKey": "sk-plain"})
    assert (found.code, found.key, found.severity) == ("config-secret-plaintext", f"{PROJECT}:apiKey", Severity.ERROR)
    assert (found.message, found.fix) == ("is stored in plain text in the stack file",
                                          "remove it and run: pulumi config set --secret apiKey")


@pytest.mark.parametrize("held", [f"{PROJECT}:hardware", "hardware"])
def test_a_section_held_as_a_secret_is_one_finding_not_a_missing_section(held: str) -> None:
    # Pulumi marks a whole section secret when one value in it is `secure:`; the program then gets
    # ciphertext, which is neither quoted nor reported again as a missing section
    found = _findings({**FULL, f"{PROJECT}:hardware": "ciphertext"}, frozenset({held}))
    assert [(f.code, f.key) for f in found] == [("config-secret-in-section", f"{PROJECT}:hardware")]
    assert found[0].message == ("holds a `secure:` value inside it: Pulumi then hands the program the whole "
                                "section as one secret, which it cannot read as settings (the value is not "
                                "shown here)")
    assert found[0].fix == KEEP_SECRETS.format("hardware")
    assert "ciphertext" not in found[0].message + found[0].fix


def test_a_secret_section_hides_only_its_own_missing_finding() -> None:
    values = {f"{PROJECT}:hardware": "ciphertext", f"{PROJECT}:image": BASE["image"]}
    found = _findings(values, frozenset({f"{PROJECT}:hardware"}))
    assert [(f.code, f.key) for f in found] == [("config-secret-in-section", f"{PROJECT}:hardware"),
                                                ("config-missing", f"{PROJECT}:model")]


def test_a_section_validated_alone_reports_its_keys_in_full() -> None:
    # promotion validates the release and target sections alone (release/promotion.py)
    with pytest.raises(ValidationError) as caught:
        HardwareSettings.model_validate({"gpu": "A100-80GB", "count": "two"})
    (found,) = section_error("hardware", caught.value).findings
    assert (found.code, found.key, found.message) == ("config-type", f"{PROJECT}:hardware.count",
                                                      "expects int, got 'two'")
    assert found.fix.startswith("write a whole number such as 8192 (")


def test_every_finding_of_a_stack_is_an_error() -> None:
    found = _findings({**FULL, "vllm-serving:zz": 1, "vllm-serving:engine": {"maxNumSeqs": "x"}})
    assert {f.severity for f in found} == {Severity.ERROR}


def test_the_settings_hold_every_section_the_stack_file_gave() -> None:
    settings = parse_stack_config(FULL)
    assert isinstance(settings, StackSettings) and settings.model.name == "Qwen3.5-27B"


def test_only_three_parts_with_config_in_the_middle_are_the_old_form() -> None:
    # ParseKey takes `ns:config:name` as a module member; anything longer splits at the first ':'
    (found,) = _findings({**FULL, f"{PROJECT}:config:engine:x": 1})
    assert (found.key, found.message) == (f"{PROJECT}:config:engine:x", "unknown config key 'config:engine:x'")


def test_problems_past_the_cap_are_counted_whether_top_level_or_inside_sections() -> None:
    # 52 unknown top-level keys fill the 50 findings; the 3 mistakes inside sections are counted
    values = ({f"{PROJECT}:x{i:02d}": 1 for i in range(52)}
              | {**FULL, f"{PROJECT}:engine": {"maxNumSeqs": "a", "maxModelLen": "b", "dtype": "c"}})
    found = _findings(values)
    assert len(found) == 51 and {f.code for f in found[:50]} == {"config-unknown-key"}
    assert found[-1].message == "and 5 more problems past the first 50"


def test_a_section_that_is_no_mapping_ends_its_fix_with_the_section_s_documentation() -> None:
    (found,) = _findings({**FULL, f"{PROJECT}:engine": ["--enforce-eager"]})
    assert (found.message, found.fix) == ("must be a mapping of keys, got a list",
                                          "write it as YAML keys under engine (vLLM engine flags.)")
    (found,) = _findings({**FULL, f"{PROJECT}:engine": None})
    assert (found.message, found.fix) == (
        "is empty", "write its keys indented under engine, or delete the line (vLLM engine flags.)")
