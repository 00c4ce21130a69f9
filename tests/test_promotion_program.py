"""Promotion under the mock engine: a prod stack reads staging's `release` through a
StackReference (answered with staging's real outputs) and deploys exactly that."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.program import EXPORTS
from tests.conftest import shipped_stack
from tests.pulumi_harness import ProgramFailed
from tests.safety.helpers import SENTINELS

SOURCE = "organization/vllm-serving/v100-staging"
STAGING_DIGEST = "sha256:" + "12" * 32


@pytest.fixture
def staging(program: Any) -> dict[str, Any]:
    """What the engine would read from v100-staging after its deployment, with a known digest."""
    outputs: dict[str, Any] = copy.deepcopy(program(
        shipped_stack("v100-staging"), stack="v100-staging", secrets=SENTINELS).outputs)
    outputs["release"]["image"]["digest"] = STAGING_DIGEST
    return outputs


def test_prod_deploys_the_staging_digest_with_its_own_hardware_flags(program: Any, staging: dict[str, Any]) -> None:
    prod_config = shipped_stack("v100-prod")
    prod_config["vllm-serving:engine"] = {"tensorParallelSize": 4, "pipelineParallelSize": 2,
                                          "gpuMemoryUtilization": 0.85}
    run = program(prod_config, stack="v100-prod", secrets=SENTINELS, stack_outputs={SOURCE: staging})
    assert run.reads == [("pulumi:pulumi:StackReference", SOURCE, SOURCE)]
    image = run.one("RemoteImage").inputs["name"]
    assert image == f"192.168.122.156:30000/vllm/vllm-openai:v0.19.1@{STAGING_DIGEST}"
    command = run.one("Container").inputs["command"]
    flags = dict(zip(command[::2], command[1::2], strict=True))
    assert flags["--tensor-parallel-size"] == "4" and flags["--pipeline-parallel-size"] == "2"
    assert flags["--gpu-memory-utilization"] == "0.85"
    assert flags["--dtype"] == "half" and flags["--max-model-len"] == "8192"
    staging_release = staging["release"]
    release = run.outputs["release"]
    assert release["promotedFrom"] == SOURCE and release["stack"] == "v100-prod"
    assert release["image"]["digest"] == STAGING_DIGEST
    assert release["argvFingerprint"] == staging_release["argvFingerprint"]
    assert release["engine"] == staging_release["engine"]
    assert run.outputs["baseUrl"] == "http://gpu-v100-01:30006/v1"  # prod's own host


def test_shipped_prod_reads_the_shipped_staging(program: Any) -> None:
    run = program(shipped_stack("v100-prod"), stack="v100-prod", secrets=SENTINELS)
    assert "@sha256:" in run.one("RemoteImage").inputs["name"]
    assert run.outputs["release"]["promotedFrom"] == SOURCE
    assert set(run.outputs) == set(EXPORTS["docker"])


def test_bf16_release_on_v100_fails_with_both_stacks_before_any_resource(
    program: Any, staging: dict[str, Any],
) -> None:
    release = staging["release"]
    release["engine"] = {**release["engine"], "dtype": "bfloat16"}
    with pytest.raises(ProgramFailed) as failed:
        program(shipped_stack("v100-prod"), stack="v100-prod", secrets=SENTINELS,
                stack_outputs={SOURCE: staging}, preview=True)
    message = str(failed.value)
    assert "vllm-serving:engine.dtype" in message and "bfloat16" in message
    assert "v100-staging" in message and "v100-prod" in message
    assert failed.value.resources == []  # only the stack reference was read
    assert [t for t, _, _ in failed.value.reads] == ["pulumi:pulumi:StackReference"]


def test_source_that_exports_no_release_is_named(program: Any, staging: dict[str, Any]) -> None:
    del staging["release"]
    with pytest.raises(ProgramFailed) as failed:
        program(shipped_stack("v100-prod"), stack="v100-prod", secrets=SENTINELS,
                stack_outputs={SOURCE: staging})
    assert "exports no release" in str(failed.value)
    assert "pulumi up -s v100-staging" in str(failed.value)


def test_release_key_set_on_prod_is_refused(program: Any, staging: dict[str, Any]) -> None:
    config = shipped_stack("v100-prod")
    config["vllm-serving:engine"] = {**config["vllm-serving:engine"], "maxModelLen": 32768}
    with pytest.raises(ProgramFailed) as failed:
        program(config, stack="v100-prod", secrets=SENTINELS, stack_outputs={SOURCE: staging})
    assert "release-key-overridden" not in str(failed.value)  # the message, not the code, is shown
    assert "vllm-serving:engine.maxModelLen" in str(failed.value)
    assert failed.value.resources == []


def test_tag_only_release_is_deployed_with_a_warning(program: Any, staging: dict[str, Any]) -> None:
    del staging["release"]["image"]["digest"]
    run = program(shipped_stack("v100-prod"), stack="v100-prod", secrets=SENTINELS,
                  stack_outputs={SOURCE: staging})
    assert run.one("RemoteImage").inputs["name"].endswith(":v0.19.1")
    assert any("release-tag-only" in w for w in run.warnings)


@pytest.mark.parametrize("stack", ["v100", "a100", "a100-k8s", "v100-staging"])
def test_every_stack_exports_its_release(program: Any, stack: str) -> None:
    run = program(shipped_stack(stack), stack=stack, secrets=SENTINELS)
    kind = "kubernetes" if stack.endswith("k8s") else "docker"
    assert set(run.outputs) == set(EXPORTS[kind])
    release = run.outputs["release"]
    assert release["stack"] == stack and release["promotedFrom"] is None
    assert release["argvFingerprint"].startswith("sha256:")
    if kind == "docker":  # the pulled digest, so a promotion pins the exact image
        assert release["image"]["digest"] == run.outputs["imageDigest"].rsplit("@", 1)[1]


def test_stack_promoting_from_itself_reads_nothing(program: Any) -> None:
    config = shipped_stack("v100-prod")
    config["vllm-serving:release"] = {"promoteFrom": "organization/vllm-serving/v100-prod"}
    with pytest.raises(ProgramFailed) as failed:
        program(config, stack="v100-prod", secrets=SENTINELS, stack_outputs={})
    assert "promotes from itself" in str(failed.value)
    assert failed.value.resources == [] and failed.value.reads == []
