"""What a promotion tells the operator, finding by finding: the code, the key, the message and the
fix, written out here; and the release output as Pulumi keeps it (plain JSON data)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest

from tests.paths import PROJECT_DIR, stack_file
from tests.stack_builders import make_spec
from vllm_serving.findings import ConfigError, Finding, Severity
from vllm_serving.release.carried import argv_fingerprint, release_of, with_digest
from vllm_serving.release.promotion import Promotion, promote_from, promote_values, promotion_findings, target_kind
from vllm_serving.stack_files.loader import project_defaults, read_stack_file

SOURCE = "organization/vllm-serving/v100-staging"
STAGING = make_spec("v100-staging")
RELEASE = release_of(STAGING.settings, "v100-staging")
PROD_VALUES = dict(read_stack_file(stack_file("v100-prod"), PROJECT_DIR).values)


def _findings(release: dict[str, Any], deployed: bool = True) -> dict[str, Finding]:
    promotion = Promotion(SOURCE, "v100-prod", release, deployed)
    return {f.code: f for f in promotion_findings(STAGING.settings, promotion)}


def test_the_release_is_plain_json_as_pulumi_keeps_the_output() -> None:
    """The source exports it, the promoting stack reads it back: tuples become lists, nothing else moves."""
    assert json.loads(json.dumps(RELEASE)) == RELEASE
    assert set(RELEASE) == {"stack", "promotedFrom", "target", "image", "model", "engine", "argvFingerprint"}
    assert (RELEASE["stack"], RELEASE["promotedFrom"], RELEASE["target"]) == ("v100-staging", None, "docker")
    assert RELEASE["engine"]["env"] == {"VLLM_USE_MODELSCOPE": "false"}


def test_the_fingerprint_covers_the_release_flags_extra_args_and_env_only() -> None:
    settings = STAGING.settings
    base = argv_fingerprint(settings)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", base)

    def engine(**changes: Any) -> str:
        return argv_fingerprint(settings.model_copy(update={"engine": settings.engine.model_copy(update=changes)}))

    assert engine(extra_args=("--enforce-eager",)) != base
    assert engine(env={"VLLM_USE_MODELSCOPE": "true"}) != base
    assert engine(max_model_len=4096) != base
    assert engine(max_num_seqs=8, max_num_batched_tokens=4096, data_parallel_size=2) == base  # the host's own
    served = settings.model_copy(update={"model": settings.model.model_copy(update={"served_name": "other"})})
    assert argv_fingerprint(served) != base  # --served-model-name is the release's too


def test_the_fingerprint_is_the_documented_digest_of_the_release_command() -> None:
    """sha256 of the compact JSON {"argv": release flags and extra args, "env": sorted pairs}: a contract
    between the commit that deployed the source and the one promoting it, so an upgrade of this project
    that renders the same command keeps every deployed release promotable."""
    # Pulumi.v100-staging.yaml's command without the host's own --tensor-parallel-size, --gpu-memory-utilization
    argv = ["--model", "/data/models/Qwen3.5-27B", "--served-model-name", "qwen3.5-27b", "--max-model-len", "8192",
            "--dtype", "half", "--reasoning-parser", "qwen3", "--enable-prefix-caching", "--enable-auto-tool-choice",
            "--tool-call-parser", "qwen3_coder"]
    payload = json.dumps({"argv": argv, "env": [["VLLM_USE_MODELSCOPE", "false"]]}, separators=(",", ":"))
    assert RELEASE["argvFingerprint"] == "sha256:" + hashlib.sha256(payload.encode()).hexdigest()


def test_a_pulled_digest_pins_the_release_once() -> None:
    pulled = "harbor.internal:30000/vllm/vllm-openai@sha256:" + "ab" * 32
    assert with_digest(RELEASE, pulled)["image"]["digest"] == "sha256:" + "ab" * 32
    pinned = {**RELEASE, "image": {**RELEASE["image"], "digest": "sha256:" + "cd" * 32}}
    assert with_digest(pinned, pulled) is pinned  # the stack's own image.digest is what it verified
    assert with_digest(RELEASE, "vllm/vllm-openai:v0.19.1") is RELEASE  # a tag is no digest


def test_a_tag_only_release_warns_that_a_moved_tag_deploys_something_unverified() -> None:
    finding = _findings(RELEASE)["release-tag-only"]
    assert (finding.severity, finding.key) == (Severity.WARNING, "vllm-serving:release.promoteFrom")
    assert finding.message == (
        "the release of v100-staging pins the image by tag only (192.168.122.156:30000/vllm/vllm-openai:v0.19.1);"
        " a moved tag would deploy an image nobody verified")
    assert finding.fix == ("deploy v100-staging with the Docker backend (it exports the pulled digest)"
                           " or set image.digest there")
    pinned = {**RELEASE, "image": {**RELEASE["image"], "digest": "sha256:" + "cd" * 32}}
    assert "release-tag-only" not in _findings(pinned)
    assert "release-tag-only" not in _findings(RELEASE, deployed=False)  # offline: a stack file has no digest


def test_a_release_verified_on_another_backend_is_named_on_target_kind() -> None:
    finding = _findings({**RELEASE, "target": "kubernetes"})["release-backend-differs"]
    assert (finding.severity, finding.key) == (Severity.WARNING, "vllm-serving:target.kind")
    assert finding.message.startswith("the release was verified on kubernetes (v100-staging) and is deployed on "
                                      "docker here (v100-prod)")
    assert finding.fix == ("check that v100-prod finds the weights where the release says, or verify the "
                           "release on a docker staging stack")
    assert "release-backend-differs" not in _findings({**RELEASE, "target": None})  # an older release: unknown


def test_a_release_rendered_differently_here_names_both_fingerprints() -> None:
    finding = _findings({**RELEASE, "argvFingerprint": "sha256:" + "0" * 64})["release-fingerprint-mismatch"]
    assert (finding.severity, finding.key) == (Severity.ERROR, "vllm-serving:release.promoteFrom")
    # each side as "sha256:" and its first 12 hex digits: enough to tell them apart, short enough to read
    assert re.fullmatch(r"the release of v100-staging renders to vLLM flags sha256:[0-9a-f]{12}\.\.\. here but ran "
                        r"as sha256:000000000000\.\.\. there \[stack v100-prod\]", finding.message), finding.message
    assert finding.fix.startswith("this commit renders the release differently from the one that deployed "
                                  "v100-staging: deploy v100-staging from this commit")


def test_findings_about_a_promoted_stack_name_both_stacks() -> None:
    promotion = Promotion(SOURCE, "v100-prod", RELEASE)
    own = promotion.attribute(Finding("x", Severity.ERROR, "vllm-serving:hardware.gpu", "m", "f"))
    assert (own.message, own.fix) == ("m [stack v100-prod, release promoted from v100-staging]", "f")
    carried = promotion.attribute(Finding("x", Severity.ERROR, "vllm-serving:engine.dtype", "m", "f"))
    assert carried.message == "m [engine.dtype is in the release of v100-staging, promoted into v100-prod]"
    assert carried.fix == ("change it in v100-staging, redeploy and verify it there, then promote again; "
                           "v100-prod cannot override it (f)")
    warning = promotion.attribute(Finding("x", Severity.WARNING, "vllm-serving:engine.dtype", "m", "f"))
    assert warning.fix == "f"  # a warning needs no redeploy of the source


@pytest.mark.parametrize("values", [{}, {"vllm-serving:release": {}}, {"release": {"promoteFrom": None}}])
def test_a_stack_without_promote_from_is_its_own_release(values: dict[str, Any]) -> None:
    assert promote_from(values, "v100") is None


def test_promote_from_is_checked_before_the_release_fills_the_stack() -> None:
    assert promote_from({"vllm-serving:release": {"promoteFrom": SOURCE}}, "v100-prod") == SOURCE
    assert promote_from({"release": {"promoteFrom": SOURCE}}) == SOURCE  # bare keys, as Pulumi's config API
    with pytest.raises(ConfigError) as refused:
        promote_from({"vllm-serving:release": {"promoteFrom": "v100-staging"}}, "v100-prod")
    (finding,) = refused.value.findings
    assert finding.key == "vllm-serving:release.promoteFrom" and "fully qualified" in finding.message
    with pytest.raises(ConfigError) as refused:
        promote_from({"vllm-serving:release": {"promoteFrom": "organization/vllm-serving/v100-prod"}}, "v100-prod")
    (cycle,) = refused.value.findings
    assert (cycle.code, cycle.key, cycle.message) == (
        "release-cycle", "vllm-serving:release.promoteFrom", "stack v100-prod promotes from itself")
    assert cycle.fix == "name the staging stack whose release this one deploys, or remove release.promoteFrom"


def test_the_backend_is_read_before_the_release_fills_the_stack() -> None:
    assert target_kind({}) == "docker"
    assert target_kind({"vllm-serving:target": {"kind": "kubernetes"}}) == "kubernetes"
    with pytest.raises(ConfigError) as refused:
        target_kind({"vllm-serving:target": {"kind": "nomad"}})
    assert [f.key for f in refused.value.findings] == ["vllm-serving:target.kind"]


def test_restating_an_unset_release_key_as_empty_is_no_conflict() -> None:
    """`maxModelLen:` with no value in the YAML (null): the release leaves it to vLLM too."""
    release = {**RELEASE, "engine": {k: v for k, v in RELEASE["engine"].items() if k != "kvCacheDtype"}}
    stack = {**PROD_VALUES, "vllm-serving:engine": {**PROD_VALUES["vllm-serving:engine"], "kvCacheDtype": None}}
    merged = promote_values(stack, Promotion(SOURCE, "v100-prod", release), project_defaults(PROJECT_DIR))
    assert "kvCacheDtype" not in merged["vllm-serving:engine"]


@pytest.mark.parametrize("part", ["stack", "image", "model", "engine", "argvFingerprint"])
def test_a_release_missing_a_part_is_refused_before_it_is_read(part: str) -> None:
    """A release exported before a part existed (or cut short) is not deployed from: redeploy the source."""
    partial = {key: value for key, value in RELEASE.items() if key != part}
    with pytest.raises(ConfigError) as refused:
        promote_values(PROD_VALUES, Promotion(SOURCE, "v100-prod", partial), project_defaults(PROJECT_DIR))
    assert [f.code for f in refused.value.findings] == ["release-missing"]
    assert refused.value.findings[0].fix == ("deploy v100-staging with this version first (pulumi up -s v100-staging),"
                                             " or fix release.promoteFrom")


def test_a_release_that_is_no_release_is_refused() -> None:
    for release in ({"stack": "v100-staging"}, ["not", "a", "mapping"]):
        with pytest.raises(ConfigError) as refused:
            promote_values(PROD_VALUES, Promotion(SOURCE, "v100-prod", release), {})  # type: ignore[arg-type]
        (finding,) = refused.value.findings
        assert (finding.code, finding.key) == ("release-missing", "vllm-serving:release.promoteFrom")
        assert finding.message == f"{SOURCE} exports no release (stack v100-prod promotes from it)"


def test_a_key_the_release_predates_agrees_when_restated_at_its_default() -> None:
    """A release exported by older code lacks a newer key: the stack restating that key's default
    (trustRemoteCode: false) is no conflict; any other value is, and says the release runs it unset."""
    release = {**RELEASE, "engine": {k: v for k, v in RELEASE["engine"].items() if k != "trustRemoteCode"}}
    promotion = Promotion(SOURCE, "v100-prod", release)
    engine = PROD_VALUES["vllm-serving:engine"]
    merged = promote_values({**PROD_VALUES, "vllm-serving:engine": {**engine, "trustRemoteCode": False}},
                            promotion, project_defaults(PROJECT_DIR))
    assert "trustRemoteCode" not in merged["vllm-serving:engine"]
    with pytest.raises(ConfigError) as refused:
        promote_values({**PROD_VALUES, "vllm-serving:engine": {**engine, "trustRemoteCode": True}},
                       promotion, project_defaults(PROJECT_DIR))
    (finding,) = refused.value.findings
    assert (finding.code, finding.key) == ("release-key-overridden", "vllm-serving:engine.trustRemoteCode")
    assert finding.message == ("stack v100-prod sets engine.trustRemoteCode=True, but its release comes from "
                               "v100-staging, which runs '(unset)'")
    assert finding.fix == ("remove engine.trustRemoteCode from Pulumi.v100-prod.yaml; change it in v100-staging "
                           "and promote again")


def test_an_overriding_stack_is_told_what_the_release_runs() -> None:
    engine = PROD_VALUES["vllm-serving:engine"]
    with pytest.raises(ConfigError) as refused:
        promote_values({**PROD_VALUES, "vllm-serving:engine": {**engine, "maxModelLen": 32768}},
                       Promotion(SOURCE, "v100-prod", RELEASE), project_defaults(PROJECT_DIR))
    (finding,) = refused.value.findings
    assert finding.message == ("stack v100-prod sets engine.maxModelLen=32768, but its release comes from "
                               "v100-staging, which runs 8192")


def test_a_section_the_stack_leaves_out_is_the_releases() -> None:
    stack = {k: v for k, v in PROD_VALUES.items() if k != "vllm-serving:model"}
    merged = promote_values(stack, Promotion(SOURCE, "v100-prod", RELEASE), project_defaults(PROJECT_DIR))
    assert merged["vllm-serving:model"] == RELEASE["model"]
