"""Release contract and promotion, offline: what a promoting stack takes, keeps and refuses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.paths import PROJECT_DIR, ROOT, stack_file
from vllm_serving.findings import ConfigError, Severity
from vllm_serving.release.carried import CARRIED, argv_fingerprint, is_carried, release_of, with_digest
from vllm_serving.release.promotion import Promotion
from vllm_serving.rules import check
from vllm_serving.spec import promoted_spec
from vllm_serving.stack_files.loader import load_spec, project_defaults, read_stack_file, stack_path

P = "vllm-serving:"
SOURCE = "organization/vllm-serving/v100-staging"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project's Pulumi.yaml and v100 line, editable."""
    for name in ("Pulumi.yaml", "Pulumi.v100-staging.yaml", "Pulumi.v100-prod.yaml"):
        shutil.copy(PROJECT_DIR / name, tmp_path / name)
    return tmp_path


def edit(project: Path, stack: str, section: str, **values: object) -> None:
    path = stack_path(project, stack)
    data = yaml.safe_load(path.read_text())
    data["config"][P + section] = {**(data["config"].get(P + section) or {}), **values}
    path.write_text(yaml.safe_dump(data))


def test_release_carries_what_staging_verified_and_not_the_hardware_layout() -> None:
    staging = load_spec(stack_file("v100-staging"))
    release = release_of(staging.settings, "v100-staging")
    assert release["engine"]["dtype"] == "half"
    assert release["engine"]["maxModelLen"] == 8192
    assert "tensorParallelSize" not in release["engine"]
    assert "gpuMemoryUtilization" not in release["engine"]
    assert "username" not in release["image"]  # credentials stay with each stack
    assert release["model"]["hostPath"] == "/u02/models/Qwen3.5-27B"
    assert release["argvFingerprint"].startswith("sha256:")


def test_fingerprint_follows_release_flags_only() -> None:
    settings = load_spec(stack_file("v100-staging")).settings
    base = argv_fingerprint(settings)
    relaid = settings.model_copy(update={"engine": settings.engine.model_copy(
        update={"tensor_parallel_size": 4, "gpu_memory_utilization": 0.9})})
    assert argv_fingerprint(relaid) == base
    changed = settings.model_copy(update={"engine": settings.engine.model_copy(update={"dtype": "float16"})})
    assert argv_fingerprint(changed) != base


def test_is_carried() -> None:
    assert is_carried("engine.dtype") and is_carried("engine.env") and is_carried("image.tag")
    assert is_carried("engine.speculativeConfig.method")
    assert not is_carried("engine.tensorParallelSize") and not is_carried("image.username")
    assert not is_carried("hardware.gpu") and not is_carried("model.protect")
    assert "protect" not in CARRIED["model"]


def test_with_digest_pins_the_pulled_image() -> None:
    release = release_of(load_spec(stack_file("v100-staging")).settings, "v100-staging")
    digest = "sha256:" + "12" * 32
    pinned = with_digest(release, f"192.168.122.156:30000/vllm/vllm-openai@{digest}")
    assert pinned["image"]["digest"] == digest
    assert "digest" not in release["image"]  # the input is left alone
    assert with_digest(release, None) is release


def test_prod_takes_the_release_and_keeps_its_own_layout(project: Path) -> None:
    edit(project, "v100-staging", "engine", maxModelLen=16384, gpuMemoryUtilization=0.7)
    spec = load_spec(stack_path(project, "v100-prod"), "v100-prod", project)
    assert spec.promotion is not None and spec.promotion.source == SOURCE
    engine = spec.settings.engine
    assert engine.max_model_len == 16384  # from staging's release
    assert engine.gpu_memory_utilization == 0.8  # prod's own
    assert spec.settings.image.username == "admin"  # prod's own key (Pulumi.v100-prod.yaml)
    assert spec.settings.model.protect is True
    assert spec.settings.target.docker_host == "ssh://deploy@gpu-v100-01"
    assert "--max-model-len" in spec.args and "16384" in spec.args
    # a stack file never knows the pulled digest: offline views do not warn about it
    assert "release-tag-only" not in {f.code for f in check(spec)}


def test_prod_setting_a_release_key_names_both_stacks(project: Path) -> None:
    edit(project, "v100-prod", "engine", maxModelLen=32768)
    with pytest.raises(ConfigError) as caught:
        load_spec(stack_path(project, "v100-prod"), "v100-prod", project)
    (finding,) = caught.value.findings
    assert finding.code == "release-key-overridden"
    assert finding.key == P + "engine.maxModelLen"
    assert "v100-prod" in finding.message and "v100-staging" in finding.message
    assert "change it in v100-staging" in finding.fix


def test_restating_the_release_value_is_not_a_conflict(project: Path) -> None:
    edit(project, "v100-prod", "engine", dtype="half", enableAutoToolChoice=True)
    spec = load_spec(stack_path(project, "v100-prod"), "v100-prod", project)
    assert spec.settings.engine.dtype == "half"


def test_project_default_is_replaced_by_the_release(project: Path) -> None:
    edit(project, "v100-staging", "image", registry="192.168.122.156:30000",
         repository="vllm/vllm-openai", tag="v0.20.0", username="admin")
    # prod's image key is the project default (tag v0.19.1): the release replaces it silently
    spec = load_spec(stack_path(project, "v100-prod"), "v100-prod", project)
    assert spec.settings.image.tag == "v0.20.0"


def test_bf16_promoted_to_v100_fails_the_rules_with_both_stacks_named(project: Path) -> None:
    values = dict(read_stack_file(stack_path(project, "v100-prod"), project).values)
    release = release_of(load_spec(stack_file("a100")).settings, "a100-staging")
    release = {**release, "engine": {**release["engine"], "dtype": "bfloat16", "kvCacheDtype": "auto"},
               "model": {**release["model"], "name": "Qwen3.5-27B"}}
    promotion = Promotion(SOURCE, "v100-prod", release)
    spec = promoted_spec(values, set(), promotion, project_defaults(project))
    errors = [f for f in check(spec) if f.severity is Severity.ERROR]
    bf16 = next(f for f in errors if f.code == "dtype-bf16-unsupported")
    assert "v100-staging" in bf16.message and "v100-prod" in bf16.message
    assert "change it in v100-staging" in bf16.fix


def test_code_that_renders_the_release_differently_is_refused(project: Path) -> None:
    values = dict(read_stack_file(stack_path(project, "v100-prod"), project).values)
    release = release_of(load_spec(stack_path(project, "v100-staging"), "v100-staging", project).settings,
                         "v100-staging")
    drifted = Promotion(SOURCE, "v100-prod", {**release, "argvFingerprint": "sha256:" + "0" * 64})
    spec = promoted_spec(values, set(), drifted, project_defaults(project))
    assert [f.code for f in check(spec) if f.severity is Severity.ERROR] == ["release-fingerprint-mismatch"]
    same = promoted_spec(values, set(), Promotion(SOURCE, "v100-prod", release), project_defaults(project))
    assert not [f for f in check(same) if f.severity is Severity.ERROR]


def test_source_without_release_is_named(project: Path) -> None:
    values = dict(read_stack_file(stack_path(project, "v100-prod"), project).values)
    with pytest.raises(ConfigError) as caught:
        promoted_spec(values, set(), Promotion(SOURCE, "v100-prod", {}), project_defaults(project))
    assert [f.code for f in caught.value.findings] == ["release-missing"]
    assert "pulumi up -s v100-staging" in caught.value.findings[0].fix


def test_cycle_and_missing_source_are_errors(project: Path) -> None:
    edit(project, "v100-staging", "release", promoteFrom="organization/vllm-serving/v100-prod")
    with pytest.raises(ConfigError) as caught:
        load_spec(stack_path(project, "v100-prod"), "v100-prod", project)
    assert [f.code for f in caught.value.findings] == ["release-cycle"]
    (project / "Pulumi.v100-staging.yaml").unlink()
    with pytest.raises(ConfigError) as caught:
        load_spec(stack_path(project, "v100-prod"), "v100-prod", project)
    assert [f.code for f in caught.value.findings] == ["release-source-missing"]


def test_environments_doc_lists_what_a_release_carries() -> None:
    """docs/environments.md's table is the contract operators read: keep it equal to the data."""
    from vllm_serving.release.carried import ENGINE_OWN_KEYS

    rows = {line.split("|")[1].strip(" `"): line for line in
            (ROOT / "docs" / "environments.md").read_text().splitlines() if line.startswith("| `")}
    for section in ("image", "model"):
        carried_cell = rows[section].split("|")[2]
        assert {k.strip("` ") for k in carried_cell.split(",")} == set(CARRIED[section])
    own_cell = rows["engine"].split("|")[3]
    assert {k.strip("` ") for k in own_cell.split(",")} == set(ENGINE_OWN_KEYS)


def test_release_verified_on_another_backend_is_flagged(project: Path) -> None:
    values = dict(read_stack_file(stack_path(project, "v100-prod"), project).values)
    release = release_of(load_spec(stack_path(project, "v100-staging"), "v100-staging", project).settings,
                         "v100-staging")
    assert release["target"] == "docker"
    spec = promoted_spec(values, set(), Promotion(SOURCE, "v100-prod", {**release, "target": "kubernetes"}),
                         project_defaults(project))
    (finding,) = [f for f in check(spec) if f.code == "release-backend-differs"]
    assert finding.severity is Severity.WARNING and "v100-staging" in finding.message
    same = promoted_spec(values, set(), Promotion(SOURCE, "v100-prod", release), project_defaults(project))
    assert "release-backend-differs" not in {f.code for f in check(same)}
