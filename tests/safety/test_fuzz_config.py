"""Fuzzing: arbitrary JSON/YAML-like values for every config section never escape the loader as
anything but `ConfigError` (each finding keyed `vllm-serving:...`), and `check` never prints a
traceback. Derandomized with a fixed budget, so CI runs the same examples every time.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from tests.safety.helpers import run_cli
from vllm_serving import rules
from vllm_serving.findings import PROJECT, ConfigError
from vllm_serving.settings import SECRET_KEYS, SECTIONS, StackSettings
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import resolve
from vllm_serving.views.plan import deployment_plan

FUZZ = settings(
    max_examples=200, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture],
)

# A valid Docker stack; each example replaces or perturbs one part of it.
BASE: dict[str, Any] = {
    f"{PROJECT}:target": {"kind": "docker"},
    f"{PROJECT}:hardware": {"gpu": "A100-80GB", "count": 4},
    f"{PROJECT}:image": {"repository": "vllm/vllm-openai", "tag": "v0.19.1"},
    f"{PROJECT}:model": {"name": "Qwen3.6-27B-FP8", "hostPath": "/data/models/Qwen3.6-27B-FP8"},
    f"{PROJECT}:engine": {"tensorParallelSize": 4, "maxModelLen": 32768},
    f"{PROJECT}:container": {"name": "vllm"},
    f"{PROJECT}:network": {"hostPort": 8000},
}

LEAVES = (
    st.none() | st.booleans() | st.integers() | st.integers(min_value=-2, max_value=70000)
    | st.floats() | st.text(max_size=20) | st.sampled_from(["", "8k", "32g", "20m", "/data", "v0.19.1", "fp8"])
    | st.dates()  # YAML turns an unquoted 2024-01-01 into a date
)
JSON_LIKE = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)

# Values a real stack would hold, so that many examples pass the loader and reach the rules.
PLAUSIBLE_VALUES: list[Any] = [
    True, False, 1, 2, 3, 4, 8, 16, 0.5, 0.9, 0.95, 8192, 262144, 30080, "auto", "half", "bfloat16",
    "float16", "fp8", "FLASHINFER", "TRITON_ATTN", "mtp", "qwen3", "qwen3_coder", "/data/x", "vllm",
    "vllm-cache", "32g", "20m", "127.0.0.1", "::1", "v0.19.1", "v0.21.0", "nvidia", "host", "private",
    "NodePort", "LoadBalancer", "ReadOnlyMany", "nvidia.com/gpu", [0, 1], [6, 7, 8, 9], ["--enforce-eager"],
    {"VLLM_LOGGING_LEVEL": "DEBUG"}, {"method": "mtp", "numSpeculativeTokens": 2}, {"size": "64g"},
]
PLAUSIBLE = st.sampled_from(PLAUSIBLE_VALUES)


def _sub_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):  # Optional[...], tuple[Model, ...]
        inner = _sub_model(arg)
        if inner is not None:
            return inner
    return None


def keyed_by_fields(model: type[BaseModel], depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    """Dicts keyed by the model's real camelCase keys, arbitrary (or nested keyed) values."""
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, field in model.model_fields.items():
        if name == "secrets_set":
            continue
        value: st.SearchStrategy[Any] = PLAUSIBLE | JSON_LIKE
        sub = _sub_model(field.annotation)
        if sub is not None and depth > 0:
            value = value | keyed_by_fields(sub, depth - 1) | st.lists(keyed_by_fields(sub, depth - 1), max_size=2)
        optional[field.alias or to_camel(name)] = value
    return st.fixed_dictionaries({}, optional=optional)


def section_model(section: str) -> type[BaseModel]:
    model = _sub_model(StackSettings.model_fields[section].annotation)
    assert model is not None, section
    return model


def _valid_alone(section: str, base: dict[str, Any], alias: str) -> list[Any]:
    """The PLAUSIBLE values the loader accepts for `alias` when only it changes."""
    found = []
    for value in PLAUSIBLE_VALUES:
        config = {**BASE, f"{PROJECT}:{section}": {**base, alias: value}}
        try:
            resolve(parse_stack_config(config), "fuzz")
        except ConfigError:
            continue
        found.append(value)
    return found


@functools.cache
def section_values(section: str) -> st.SearchStrategy[Any]:
    """Arbitrary values, keyed dicts, and keyed dicts laid over the valid base section."""
    model = section_model(section)
    keyed = keyed_by_fields(model)
    base = BASE.get(f"{PROJECT}:{section}", {})
    aliases = [f.alias or to_camel(n) for n, f in model.model_fields.items()]
    # one to three keys of the valid base changed to values each valid alone: reaches the rules
    valid = {a: vs for a in aliases if (vs := _valid_alone(section, base, a))}
    pair: st.SearchStrategy[tuple[str, Any]] = (
        st.sampled_from(sorted(valid)).flatmap(lambda a: st.tuples(st.just(a), st.sampled_from(valid[a])))
        if valid else st.nothing())
    tweak = st.lists(pair, min_size=1, max_size=3).map(dict)
    over_base = st.one_of(keyed, tweak).map(lambda extra: {**base, **extra})
    return st.one_of(JSON_LIKE, keyed, over_base)


TOP_KEYS = st.sampled_from([*SECTIONS, *SECRET_KEYS]).flatmap(
    lambda k: st.sampled_from([k, f"{PROJECT}:{k}", f"other:{k}"])) | st.text(max_size=16)
TOP_LEVEL = st.dictionaries(TOP_KEYS, JSON_LIKE, max_size=6)


def assert_only_config_errors(values: dict[str, Any], secret_keys: frozenset[str] = frozenset()) -> None:
    """Load, resolve, check and plan; only ConfigError may come out, with vllm-serving keys."""
    try:
        spec = resolve(parse_stack_config(values, secret_keys), "fuzz")
    except ConfigError as exc:
        assert exc.findings, "a ConfigError without findings"
        for finding in exc.findings:
            assert finding.key.startswith(f"{PROJECT}:"), finding
            assert finding.message and finding.fix, finding
        return
    findings = rules.check(spec)  # the rules run on anything the loader accepts
    deployment_plan(spec, findings)


@pytest.mark.parametrize("section", SECTIONS)
@FUZZ
@given(data=st.data())
def test_section_values_only_raise_config_error(section: str, data: st.DataObject) -> None:
    value = data.draw(section_values(section))
    config = copy.deepcopy(BASE)
    config[f"{PROJECT}:{section}"] = value
    assert_only_config_errors(config)


@FUZZ
@given(extra=TOP_LEVEL, drop=st.sets(st.sampled_from(sorted(BASE))), secret=st.sets(st.sampled_from(SECRET_KEYS)))
def test_top_level_only_raises_config_error(extra: dict[str, Any], drop: set[str], secret: set[str]) -> None:
    config = {k: v for k, v in copy.deepcopy(BASE).items() if k not in drop}
    config.update(extra)
    assert_only_config_errors(config, frozenset(f"{PROJECT}:{k}" for k in secret))


def _to_yaml_safe(value: Any) -> Any:
    """YAML cannot key a mapping by a date inside our JSON-like domain; everything else dumps."""
    if isinstance(value, dict):
        return {str(k): _to_yaml_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_yaml_safe(v) for v in value]
    return value


@FUZZ
@given(section=st.sampled_from(["<top>", *SECTIONS]), data=st.data())
def test_check_cli_never_prints_a_traceback(tmp_path_factory: pytest.TempPathFactory,
                                            section: str, data: st.DataObject) -> None:
    config: dict[str, Any] = copy.deepcopy(BASE)
    if section == "<top>":
        config.update(data.draw(TOP_LEVEL))
    else:
        config[f"{PROJECT}:{section}"] = data.draw(section_values(section))
    path: Path = tmp_path_factory.mktemp("fuzz") / "Pulumi.fuzz.yaml"
    path.write_text(yaml.safe_dump({"config": _to_yaml_safe(config)}, sort_keys=False))
    result = run_cli("check", "--config-file", str(path))
    assert result.code in (0, 1), result.text
    assert "Traceback" not in result.text and "internal error" not in result.text, result.text


def test_dates_survive_the_yaml_round_trip() -> None:
    """The CLI fuzz relies on safe_dump/safe_load keeping values as the loader would see them."""
    text = yaml.safe_dump({"config": {"vllm-serving:image": {"tag": dt.date(2024, 1, 1)}}})
    assert yaml.safe_load(text)["config"]["vllm-serving:image"]["tag"] == dt.date(2024, 1, 1)
