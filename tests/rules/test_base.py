"""base.py: how the rules read extraArgs, the image's release and who to blame."""

from __future__ import annotations

import pytest

from tests.stack_builders import edit, shipped_settings, spec_of
from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Rule


def context(stack: str = "v100", **sections: object) -> Context:
    return Context(spec_of(edit(shipped_settings(stack), **sections)))


def extra(*args: str) -> Context:
    return context(engine={"extra_args": args})


@pytest.mark.parametrize(("args", "value"), [
    ((), None),
    (("--enforce-eager",), None),
    (("--enable-chunked-prefill",), True),
    (("--no-enable-chunked-prefill",), False),
    (("--no-enable-chunked",), False),  # an abbreviation argparse accepts
    (("--no_enable_chunked_prefill",), False),  # underscores for dashes
    (("--no-enable-chunked-prefill", "--enable-chunked-prefill"), True),  # the last wins
])
def test_extra_switch(args: tuple[str, ...], value: bool | None) -> None:
    assert extra(*args).extra_switch("--enable-chunked-prefill") is value


def test_chunked_prefill_is_on_unless_extra_args_turn_it_off() -> None:
    assert extra().chunked_prefill and not extra("--no-enable-chunked-prefill").chunked_prefill


@pytest.mark.parametrize(("args", "values"), [
    ((), []),
    (("--hf-overrides={\"a\": 1}",), [("--hf-overrides", '{"a": 1}')]),
    (("--enforce-eager", "--hf-overrides", "{}"), [("--hf-overrides", "{}")]),
    (("--hf-overrides.rope_parameters.factor", "2"), [("--hf-overrides.rope_parameters.factor", "2")]),
    (("--hf-overrides",), [("--hf-overrides", "")]),
    (("--hf-overrides", "{}", "--hf-overrides=x"), [("--hf-overrides", "{}"), ("--hf-overrides", "x")]),
])
def test_extra_values(args: tuple[str, ...], values: list[tuple[str, str]]) -> None:
    assert extra(*args).extra_values("--hf-overrides") == values


def test_release_follows_the_image_tag() -> None:
    assert context().release.version == "0.19.1" and not context().release_unknown
    assert context(image={"tag": "v0.20.2-cu129"}).release.version == "0.20.2"
    assert context(image={"tag": "nightly"}).release_unknown


def test_quantization_is_blamed_on_the_key_that_set_it() -> None:
    assert context().quantization_key == config_key("model", "name")
    assert context(engine={"quantization": "fp8"}).quantization_key == config_key("engine", "quantization")


def test_a_rule_with_several_offenders_reports_each_one() -> None:
    rule = Rule("demo", Severity.ERROR, config_key("model", "hostPath"), "{what} is bad", "fix {what}",
                "", "", "this project", lambda ctx: [{"what": "a"}, {"what": "b", "key": "k"}])
    found = rule.run(context())
    assert [(f.key, f.message) for f in found] == [(config_key("model", "hostPath"), "a is bad"), ("k", "b is bad")]
    assert Rule("demo", Severity.ERROR, "k", "m", "f", "", "", "", lambda ctx: None).run(context()) == []
