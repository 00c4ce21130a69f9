"""Whatever a promoting stack's own file restates, every key the release carries is deployed from the
release: either the stack's value agrees with the release (or is the project default the release
replaces) and the release's value is used, or the promotion is refused with
`release-key-overridden`. Never the stack file's value.

The oracle is the release dictionary itself (what the source stack exported), compared key by key
with what the promoted settings hold.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.paths import PROJECT_DIR, stack_file
from vllm_serving.findings import ConfigError
from vllm_serving.release.carried import CARRIED, release_of
from vllm_serving.release.promotion import Promotion
from vllm_serving.spec import promoted_spec
from vllm_serving.stack_files.loader import load_spec, project_defaults, read_stack_file

P = "vllm-serving:"
SOURCE = "organization/vllm-serving/v100-staging"
RELEASE_VALUES: dict[tuple[str, str], st.SearchStrategy[Any]] = {
    ("image", "tag"): st.sampled_from(["v0.19.1", "v0.20.2", "v0.19.0", "nightly-2026"]),
    ("image", "registry"): st.sampled_from(["harbor.internal:30000", "192.168.122.156:30000"]),
    ("image", "repository"): st.sampled_from(["vllm/vllm-openai", "mirror/vllm"]),
    ("engine", "maxModelLen"): st.sampled_from([4096, 8192, 16384]),
    ("engine", "dtype"): st.sampled_from(["half", "float16"]),
    ("engine", "enableAutoToolChoice"): st.booleans(),
    ("engine", "reasoningParser"): st.sampled_from(["qwen3", "deepseek_r1"]),
    ("model", "servedName"): st.sampled_from(["qwen", "qwen3.5-27b"]),
}
"""Carried keys and values a verified release may hold (each a valid value for a V100 stack)."""
STACK_VALUES = st.sampled_from(["v0.19.1", "v0.18.0", 2048, 8192, "half", "bfloat16", True, False, "qwen3",
                                "other", "harbor.internal:30000", "vllm/vllm-openai"])
"""What a prod file may restate under a carried key: the release's value, the project default, or
anything else."""


def _staging_release() -> dict[str, Any]:
    settings = load_spec(stack_file("v100-staging"), "v100-staging", PROJECT_DIR).settings
    return release_of(settings, "v100-staging")


BASE_RELEASE = _staging_release()
PROD_VALUES = dict(read_stack_file(stack_file("v100-prod"), PROJECT_DIR).values)
DEFAULTS = project_defaults(PROJECT_DIR)


def test_a_restated_project_default_never_wins_over_the_release() -> None:
    """The case users meet: prod's file keeps the project's image tag while staging verified another."""
    release = {**BASE_RELEASE, "image": {**BASE_RELEASE["image"], "tag": "v0.20.2"}}
    default_tag = DEFAULTS[P + "image"]["tag"]
    assert default_tag != "v0.20.2"
    stack = {**PROD_VALUES, P + "image": {**PROD_VALUES[P + "image"], "tag": default_tag}}
    spec = promoted_spec(stack, set(), Promotion(SOURCE, "v100-prod", release), DEFAULTS, PROJECT_DIR)
    assert spec.settings.image.tag == "v0.20.2"


def _release(data: st.DataObject) -> dict[str, Any]:
    release = {k: (dict(v) if isinstance(v, dict) else v) for k, v in BASE_RELEASE.items()}
    for (section, key), values in RELEASE_VALUES.items():
        if data.draw(st.booleans(), label=f"release sets {section}.{key}"):
            release[section][key] = data.draw(values, label=f"release {section}.{key}")
    return release


def _assert_deployed_from(spec: Any, release: dict[str, Any]) -> None:
    for section, keys in CARRIED.items():
        deployed = getattr(spec.settings, section).model_dump(mode="json", by_alias=True)
        for key in keys & set(release[section]):
            assert deployed[key] == release[section][key], (
                f"{section}.{key}: deployed {deployed[key]!r}, the release carries {release[section][key]!r}")
    assert spec.settings.image.username == PROD_VALUES[P + "image"]["username"]  # the stack's own key stays


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_restating_the_release_or_the_project_default_deploys_the_release(data: st.DataObject) -> None:
    release = _release(data)
    stack = dict(PROD_VALUES)
    for section, key in data.draw(st.lists(st.sampled_from(sorted(RELEASE_VALUES)), unique=True, min_size=1)):
        default = (DEFAULTS.get(P + section) or {}).get(key)
        use_default = default is not None and data.draw(st.booleans(), label=f"prod {section}.{key} = default")
        value = default if use_default else release[section].get(key)
        if value is not None:
            stack[P + section] = {**(stack.get(P + section) or {}), key: value}
    spec = promoted_spec(stack, set(), Promotion(SOURCE, "v100-prod", release), DEFAULTS, PROJECT_DIR)
    _assert_deployed_from(spec, release)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_restating_anything_else_is_refused_or_deploys_the_release(data: st.DataObject) -> None:
    release = _release(data)
    stack = dict(PROD_VALUES)
    for section, key in data.draw(st.lists(st.sampled_from(sorted(RELEASE_VALUES)), unique=True, min_size=1)):
        stack[P + section] = {**(stack.get(P + section) or {}), key: data.draw(STACK_VALUES)}
    try:
        spec = promoted_spec(stack, set(), Promotion(SOURCE, "v100-prod", release), DEFAULTS, PROJECT_DIR)
    except ConfigError as refused:
        assert {f.code for f in refused.findings} <= {"release-key-overridden"}, refused.findings
        return
    _assert_deployed_from(spec, release)
