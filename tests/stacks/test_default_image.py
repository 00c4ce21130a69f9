"""A new stack with no image section runs the public vLLM image at the project's pinned release,
with no registry login; the seed's Harbor and user belong to the stacks that reproduce seed 000."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.paths import PROJECT, PROJECT_DIR, stack_file
from tests.pulumi_harness import run_program, stack_config
from vllm_serving.engine.release_registry import known_versions
from vllm_serving.planner.capacity import PINNED_VLLM_VERSION
from vllm_serving.rules import check
from vllm_serving.stack_files.loader import load_spec, project_defaults

PINNED_TAG = "v" + ".".join(map(str, PINNED_VLLM_VERSION))
# A newcomer's first stack: the GPUs and the model, nothing else.
MINIMAL = {"config": {
    f"{PROJECT}:hardware": {"gpu": "L4", "count": 1},
    f"{PROJECT}:model": {"name": "Qwen3-0.6B", "hostPath": "/data/models/Qwen3-0.6B"},
}}


def docker_name(reference: str) -> str:
    """The name Docker pulls: a reference whose first part is no registry host is Docker Hub's."""
    first, _, rest = reference.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return reference
    return "docker.io/" + (reference if rest else f"library/{reference}")


@pytest.fixture
def minimal(tmp_path: Path) -> Path:
    """The minimal stack file in a project holding the repository's Pulumi.yaml."""
    (tmp_path / "Pulumi.yaml").write_text((PROJECT_DIR / "Pulumi.yaml").read_text())
    path = tmp_path / "Pulumi.mine.yaml"
    path.write_text(yaml.safe_dump(MINIMAL))
    return path


def test_the_project_default_is_the_public_image_at_the_pinned_release() -> None:
    image = project_defaults(PROJECT_DIR)[f"{PROJECT}:image"]
    assert image == {"repository": "vllm/vllm-openai", "tag": PINNED_TAG}
    assert PINNED_TAG.removeprefix("v") in known_versions()  # the rules have this release's registry


def test_a_minimal_stack_pulls_docker_hub_without_a_login(minimal: Path) -> None:
    spec = load_spec(minimal, "mine", minimal.parent)
    image = spec.settings.image
    assert docker_name(image.reference) == f"docker.io/vllm/vllm-openai:{PINNED_TAG}"
    assert image.registry is None and image.username is None
    assert "registry-password-missing" not in {f.code for f in check(spec)}


def test_under_pulumi_it_registers_no_registry_auth(minimal: Path) -> None:
    run = run_program(stack_config(minimal), stack="mine")
    assert docker_name(run.one("RemoteImage").inputs["name"]) == f"docker.io/vllm/vllm-openai:{PINNED_TAG}"
    [provider] = [r for r in run.resources if r.type == "pulumi:providers:docker"]
    assert "registryAuth" not in provider.inputs


@pytest.mark.parametrize("stack", ["v100", "v100-staging", "v100-prod"])
def test_the_seed_000_stacks_keep_their_harbor_and_user(stack: str) -> None:
    image = load_spec(stack_file(stack), stack, PROJECT_DIR).settings.image
    assert (image.registry, image.repository, image.tag, image.username) == (
        "192.168.122.156:30000", "vllm/vllm-openai", PINNED_TAG, "admin")


@pytest.mark.parametrize("reference", ["vllm/vllm-openai:v0.19.1", "192.168.122.156:30000/vllm/vllm-openai:v0.19.1"])
def test_docker_name_keeps_a_registry_and_completes_docker_hub(reference: str) -> None:
    named = docker_name(reference)
    assert named.endswith(reference) and named.count("/") == 2
