"""The fix a habit from elsewhere gets (vLLM's flags, docker run, YAML 1.1, Kubernetes), and the
harmless spellings that are simply accepted. The corpus (tests/safety/bad_configs) has one stack
file per habit; these are the edges around them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.settings.minimal_stack import BASE, parse_minimal
from vllm_serving.findings import ConfigError
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.units import GIB

_parse = parse_minimal


def _fix(key: str, **sections: Any) -> str:
    with pytest.raises(ConfigError) as exc:
        _parse(**sections)
    found = {f.key: f"{f.message} - {f.fix}" for f in exc.value.findings}
    assert key in found, found
    return found[key]


@pytest.mark.parametrize(("written", "says"), [
    ("32K", "whole number 32768"), ("32k", "whole number 32000"), ("1.5k", "whole number 1500")])
def test_vllm_shorthand_gets_the_number_vllm_would_read(written: str, says: str) -> None:
    assert says in _fix("vllm-serving:engine.maxModelLen", engine={"maxModelLen": written})


@pytest.mark.parametrize(("value", "says", "lacks"), [
    (90, "write 0.9", None), ("85%", "write 0.85", None),
    (1.5, "at most 1", "percentage"),  # 1.5 is no percentage: the bound, not a guess
])
def test_a_percentage_is_turned_into_a_share(value: object, says: str, lacks: str | None) -> None:
    text = _fix("vllm-serving:engine.gpuMemoryUtilization", engine={"gpuMemoryUtilization": value})
    assert says in text and (lacks is None or lacks not in text)


def test_snake_case_names_are_refused_with_their_yaml_key_nested_too() -> None:
    """Accepted silently before: a snake_case twin beside the camelCase key decided nothing visibly."""
    spec = {"method": "mtp", "num_speculative_tokens": 1}
    with pytest.raises(ConfigError) as exc:
        _parse(engine={"max_model_len": 4096, "speculativeConfig": spec})
    fixes = {f.key: f.fix for f in exc.value.findings}
    assert "write it as maxModelLen" in fixes["vllm-serving:engine.max_model_len"]
    assert "write it as numSpeculativeTokens" in fixes[
        "vllm-serving:engine.speculativeConfig.num_speculative_tokens"]


@pytest.mark.parametrize("empty", [None, "", "  "])  # YAML's null, and Pulumi's "" for an empty key
def test_an_empty_section_says_so(empty: object) -> None:
    assert "is empty" in _fix("vllm-serving:engine", engine=empty)


@pytest.mark.parametrize(("value", "says"), [(False, "write 'no' in quotes"), ("No", "write 'no' (exactly so")])
def test_restart_no_whatever_yaml_made_of_it(value: object, says: str) -> None:
    assert says in _fix("vllm-serving:container.restart", container={"restart": value})


def test_a_yaml_boolean_where_text_is_wanted() -> None:
    assert "write a quoted string" in _fix("vllm-serving:image.tag", image={"tag": True})


@pytest.mark.parametrize(("written", "host"), [("30006:8000", "30006"), ("0.0.0.0:30006:8000", "30006")])
def test_a_docker_port_mapping_gets_the_host_port(written: str, host: str) -> None:
    assert f"write hostPort: {host}" in _fix("vllm-serving:network.hostPort", network={"hostPort": written})


def test_kubernetes_spellings_of_the_same_quantity_are_accepted() -> None:
    """`cpu: 16` and `64Gi` mean what they say in a manifest and in Docker's notation alike."""
    s = _parse(target={"kind": "kubernetes"},
               kubernetes={"resources": {"cpu": 16, "memory": "64Gi", "memoryLimit": "128GiB"}})
    assert s.kubernetes.resources.cpu == "16"
    assert (s.kubernetes.resources.memory, s.kubernetes.resources.memory_limit) == (64 * GIB, 128 * GIB)


@pytest.mark.parametrize("namespace", ["kube-system", "kube-public", "kube-node-lease"])
def test_system_namespaces_are_refused(namespace: str) -> None:
    assert "system namespace" in _fix("vllm-serving:kubernetes.namespace", kubernetes={"namespace": namespace})


@pytest.mark.parametrize(("key", "image"), [
    ("vllm-serving:image.username", {"tag": "v0.19.1", "username": "admin:s3cret-pw"}),
    ("vllm-serving:image.registry", {"tag": "v0.19.1", "registry": "admin:s3cret-pw@harbor.local"}),
])
def test_a_password_typed_into_the_image_section_is_never_quoted(key: str, image: dict[str, str]) -> None:
    text = _fix(key, image=image)
    assert "s3cret-pw" not in text and "pulumi config set --secret registryPassword" in text


@pytest.mark.parametrize(("path", "says"), [
    ("/data/${MODEL}/qwen", "holds a '$'"), ("$HOME/models", "holds a '$'"), ("~/models", "only a shell expands"),
    ("C:\\models\\qwen", "Windows path"), ("D:/models", "Windows path"), ("models/qwen", "not an absolute path"),
])
def test_paths_nothing_would_expand(path: str, says: str) -> None:
    assert says in _fix("vllm-serving:model.hostPath", model={"name": "Qwen3.5-27B", "hostPath": path})


def test_a_home_path_under_a_tilde_free_name_is_fine() -> None:
    assert _parse(model={"name": "Qwen3.5-27B", "hostPath": "/home/ops/models~old"}).model.host_path


def test_a_dotted_top_level_key_is_told_to_nest() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_stack_config({**{f"vllm-serving:{k}": v for k, v in BASE.items()}, "vllm-serving:engine.dtype": "half"})
    assert "nest it: dtype indented under vllm-serving:engine" in exc.value.findings[0].fix


# Each habit and the fix it gets, word for word: a habit dropped from the hints would fall back to
# "remove it; known keys here: ...", which does not say where the setting lives.
@pytest.mark.parametrize(("habit", "fix"), [
    ("password", "secrets are not config values: remove it and run pulumi config set --secret registryPassword"),
    ("registryPassword", "remove it and run: pulumi config set --secret registryPassword"),
    ("apiKey", "remove it and run: pulumi config set --secret apiKey"),
    ("hfToken", "remove it and run: pulumi config set --secret hfToken"),
    ("version", "the image version is image.tag (e.g. v0.19.1); rename the key"),
    ("tp", "vLLM's -tp is engine.tensorParallelSize; rename the key"),
    ("pp", "vLLM's -pp is engine.pipelineParallelSize; rename the key"),
    ("dp", "vLLM's -dp is engine.dataParallelSize; rename the key"),
    ("ports", "publish the API with network.hostPort: 30006 (the host port alone: the container port is always 8000)"),
    ("port", "the host port is network.hostPort (the container port is always 8000); the Service port is "
             "kubernetes.service.port"),
    ("volumes", "mounts are keys of their own: model.hostPath (the weights, read-only) and cache.hostPath "
                "(vLLM's compile cache); remove it"),
    ("gpus", "the GPUs are hardware.count (how many the host has) and hardware.deviceIds (which ones the "
             "container gets); remove it"),
    ("environment", "environment variables go under vllm-serving:engine as env: {NAME: value}"),
    ("env", "environment variables go under vllm-serving:engine as env: {NAME: value}"),
    ("command", "vLLM flags are keys of vllm-serving:engine, the rest a list in engine.extraArgs; remove it"),
    ("args", "vLLM flags are keys of vllm-serving:engine, the rest a list in engine.extraArgs; remove it"),
    ("image", "the image is its own section, vllm-serving:image (registry, repository, tag); move it there"),
])
def test_a_key_written_by_habit_gets_the_fix_that_says_where_it_lives(habit: str, fix: str) -> None:
    found = _fix(f"vllm-serving:container.{habit}", container={habit: 1})
    assert found.split(" - ", 1)[1] == fix


@pytest.mark.parametrize(("section", "key", "written", "meant"), [
    ("target", "kind", "k8s", "kubernetes"), ("target", "kind", "kube", "kubernetes"),
    ("engine", "dtype", "fp16", "float16"), ("engine", "dtype", "bf16", "bfloat16"),
    ("engine", "dtype", "fp32", "float32"), ("engine", "dtype", "FP16", "float16"),
])
def test_an_abbreviated_choice_gets_the_name_it_stands_for(section: str, key: str, written: str, meant: str) -> None:
    found = _fix(f"vllm-serving:{section}.{key}", **{section: {key: written}})
    assert found.split(" - ", 1)[1] == f"write '{meant}' (the name itself, not its abbreviation)"
