"""Waivers under the mock engine: the program decides as `vllm-stack check` does. A waived error
deploys, and the preview logs it (with its reason) as a warning, which `pulumi preview` prints under
Diagnostics and the preview workflow posts on the PR; an unwaived, stale or unwaivable one stops
the program before any resource; a promoting stack does not inherit its source's waivers."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conftest import shipped_stack
from tests.pulumi_harness import ProgramFailed
from tests.safety.helpers import SENTINELS

PATCHED = "our image carries a bf16 patch for sm_70 (OPS-1234)"
WAIVER = {"code": "dtype-bf16-unsupported", "reason": PATCHED}
SOURCE = "organization/vllm-serving/v100-staging"


def bf16(stack: str, waivers: list[dict[str, Any]] | None) -> dict[str, Any]:
    config = copy.deepcopy(shipped_stack(stack))
    if stack != "v100-prod":  # prod's engine flags come from the release
        config["vllm-serving:engine"] = {**config["vllm-serving:engine"], "dtype": "bfloat16"}
    if waivers is not None:
        config["vllm-serving:waivers"] = waivers
    return config


def test_a_waived_error_deploys_and_the_preview_shows_it_with_its_reason(program: Any) -> None:
    run = program(bf16("v100", [WAIVER]), stack="v100", secrets=SENTINELS, preview=True)
    command = run.one("Container").inputs["command"]
    assert command[command.index("--dtype") + 1] == "bfloat16"
    waived = [w for w in run.warnings if w.startswith("WAIVED ")]
    assert waived == [f"WAIVED ERROR dtype-bf16-unsupported vllm-serving:engine.dtype: bfloat16 needs compute "
                      f"capability 8.0; V100-32GB has 7.0 - set engine.dtype: half (float16) [waived: {PATCHED}]"]


def test_the_same_error_without_a_waiver_stops_before_any_resource(program: Any) -> None:
    with pytest.raises(ProgramFailed) as failed:
        program(bf16("v100", None), stack="v100", secrets=SENTINELS, preview=True)
    assert "vllm-serving:engine.dtype" in str(failed.value) and "set engine.dtype: half" in str(failed.value)
    assert failed.value.resources == []


@pytest.mark.parametrize(("waivers", "key", "words"), [
    # stale: the shipped v100 runs half, so nothing matches
    ([WAIVER], "vllm-serving:waivers[0]", "remove vllm-serving:waivers[0] from the stack file"),
    # unwaivable: the shipped v100 binds 0.0.0.0 without an API key
    ([{"code": "api-open-on-network", "reason": "firewalled"}], "vllm-serving:waivers[0].code",
     "api-open-on-network cannot be waived"),
    ([{"code": "dtype-bf16-unsupported", "reason": " "}], "vllm-serving:waivers[0].reason", "the reason is blank"),
])
def test_a_waiver_that_cannot_stand_stops_before_any_resource(
        program: Any, waivers: list[dict[str, Any]], key: str, words: str) -> None:
    with pytest.raises(ProgramFailed) as failed:
        program({**shipped_stack("v100"), "vllm-serving:waivers": waivers}, stack="v100", secrets=SENTINELS)
    assert f"{key}: " in str(failed.value) and words in str(failed.value)
    assert failed.value.resources == []


def test_a_secret_check_of_the_program_is_not_waivable(program: Any) -> None:
    # registry-password-missing blocks only under Pulumi; a waiver of it is refused there too
    config = {**shipped_stack("v100"), "vllm-serving:waivers": [
        {"code": "registry-password-missing", "reason": "the host is logged in"}]}
    with pytest.raises(ProgramFailed) as failed:
        program(config, stack="v100")
    assert "registry-password-missing cannot be waived" in str(failed.value)
    assert "pulumi config set --secret registryPassword" in str(failed.value)


def test_prod_needs_its_own_waiver_for_the_release_it_promotes(program: Any) -> None:
    staging = program(bf16("v100-staging", [WAIVER]), stack="v100-staging", secrets=SENTINELS).outputs
    assert staging["release"]["engine"]["dtype"] == "bfloat16"
    assert "waiver" not in repr(staging["release"]).lower()  # the release carries none
    with pytest.raises(ProgramFailed) as failed:
        program(bf16("v100-prod", None), stack="v100-prod", secrets=SENTINELS, stack_outputs={SOURCE: staging})
    assert "engine.dtype is in the release of v100-staging, promoted into v100-prod" in str(failed.value)
    assert failed.value.resources == []
    own = {**WAIVER, "reason": "prod runs the patched image too (OPS-1234)"}
    run = program(bf16("v100-prod", [own]), stack="v100-prod", secrets=SENTINELS, stack_outputs={SOURCE: staging})
    assert any(w.startswith("WAIVED ERROR dtype-bf16-unsupported") and w.endswith(f"[waived: {own['reason']}]")
               for w in run.warnings)
