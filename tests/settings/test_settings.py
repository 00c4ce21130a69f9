"""Settings: defaults, units and the error each wrong value gets."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from tests.settings.minimal_stack import BASE, parse_minimal
from vllm_serving.findings import ConfigError
from vllm_serving.settings.engine import EngineSettings, SpeculativeSettings
from vllm_serving.settings.stack_config import parse_stack_config

_parse = parse_minimal


def _errors(**sections: Any) -> dict[str, str]:
    with pytest.raises(ConfigError) as exc:
        _parse(**sections)
    return {f.key: f"{f.message} | {f.fix}" for f in exc.value.findings}


def test_minimal_stack_gets_safe_defaults() -> None:
    s = _parse()
    assert s.target.kind == "docker"
    assert s.container.ipc_mode == "host" and not s.container.privileged
    assert s.container.restart == "unless-stopped"
    assert s.network.host_port == 8000
    assert s.model.mount_path == "/models/qwen"
    assert s.cache_volume_name == "vllm-cache"
    assert s.image.reference == "vllm/vllm-openai:v0.19.1"


@pytest.mark.parametrize(("text", "mb"), [("128g", 131072), ("32gb", 32768), ("512m", 512), ("1.5g", 1536)])
def test_shm_size_in_docker_notation_becomes_megabytes(text: str, mb: int) -> None:
    assert _parse(container={"shmSize": text}).container.shm_size_mb == mb


def test_every_error_is_reported_at_once_with_its_key() -> None:
    errors = _errors(engine={"tensorParallelSize": 0, "dtype": "bf16"}, network={"bindAddress": "everywhere"})
    assert set(errors) == {
        "vllm-serving:engine.tensorParallelSize",
        "vllm-serving:engine.dtype",
        "vllm-serving:network.bindAddress",
    }
    assert "write 'bfloat16'" in errors["vllm-serving:engine.dtype"]  # vLLM's name for bf16
    assert "'auto', 'half'" in _errors(engine={"dtype": "int4"})["vllm-serving:engine.dtype"]


def test_unknown_top_level_key_is_suggested() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_stack_config({**{f"vllm-serving:{k}": v for k, v in BASE.items()}, "vllm-serving:enigne": {}})
    assert exc.value.findings[0].fix.startswith("did you mean 'vllm-serving:engine'")


def test_provider_namespaces_are_left_alone() -> None:
    parse_stack_config({**{f"vllm-serving:{k}": v for k, v in BASE.items()}, "docker:host": "x"})


@pytest.mark.parametrize(("section", "value", "key"), [
    ("image", {"registry": "https://harbor", "tag": "v1"}, "vllm-serving:image.registry"),
    ("image", {"tag": "v0.19.1", "digest": "sha256:123"}, "vllm-serving:image.digest"),
    ("model", {"name": "Qwen3.5-27B", "hostPath": "models/qwen"}, "vllm-serving:model.hostPath"),
    ("model", {"name": "Qwen3.5-27B"}, "vllm-serving:model.hostPath"),
    ("target", {"dockerHost": "gpu-host:2375"}, "vllm-serving:target.dockerHost"),
    ("container", {"shmSize": "lots"}, "vllm-serving:container.shmSize"),
    ("container", {"startupTimeout": "soon"}, "vllm-serving:container.startupTimeout"),
    ("engine", {"env": {"HF_TOKEN": "x"}}, "vllm-serving:engine.env"),
    ("engine", {"env": {"MY_SECRET": "x"}}, "vllm-serving:engine.env"),
    ("cache", {"hostPath": "/a", "volumeName": "b"}, "vllm-serving:cache.volumeName"),
    ("hardware", {"gpu": "A100-80GB", "count": 4, "deviceIds": [1, 1]}, "vllm-serving:hardware.deviceIds"),
])
def test_wrong_values_name_their_key(section: str, value: Any, key: str) -> None:
    errors = _errors(**{section: value})
    assert key in errors, errors
    assert " | " in errors[key] and errors[key].split(" | ")[1]


def test_section_that_is_not_a_mapping() -> None:
    errors = _errors(engine="tp=8")
    assert "mapping" in errors["vllm-serving:engine"]


@pytest.mark.parametrize(("section", "key", "fix"), [
    ("image", "password", "pulumi config set --secret registryPassword"),
    ("engine", "apiKey", "pulumi config set --secret apiKey"),
    ("image", "version", "image.tag"),
])
def test_habitual_keys_get_the_real_fix(section: str, key: str, fix: str) -> None:
    errors = _errors(**{section: {**BASE.get(section, {}), key: "x"}})
    assert fix in errors[f"vllm-serving:{section}.{key}"]
    assert "'x'" not in errors[f"vllm-serving:{section}.{key}"]  # a value typed there is never echoed


@pytest.mark.parametrize("value", ["9" * 20000, ["--x"] * 5000, {"k" * 100: "v" * 100000}])
def test_a_bad_value_is_quoted_as_a_short_excerpt(value: Any) -> None:
    # a huge or hostile value never comes back whole in an error message (or Pulumi's log)
    errors = _errors(engine={"maxModelLen": value})
    assert list(errors) == ["vllm-serving:engine.maxModelLen"]
    assert len(errors["vllm-serving:engine.maxModelLen"]) < 300, errors


@pytest.mark.parametrize(("value", "ok"), [(-1, True), (16, True), (8, False), (0, False), (-2, False)])
def test_max_model_len_takes_minus_one_for_vllms_auto_fit(value: int, ok: bool) -> None:
    """vLLM reads --max-model-len -1 (or auto) as "fit it to the KV cache" (human_readable_int_or_auto)."""
    if ok:
        assert EngineSettings(max_model_len=value).max_model_len == value
    else:
        with pytest.raises(ValidationError):
            EngineSettings(max_model_len=value)


def test_more_than_sixteen_speculative_tokens_are_accepted() -> None:
    """SpeculativeConfig.num_speculative_tokens has no upper bound (config/speculative.py: gt=0)."""
    assert SpeculativeSettings(method="ngram", num_speculative_tokens=32).num_speculative_tokens == 32
