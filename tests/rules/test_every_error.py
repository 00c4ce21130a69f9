"""every_error.py: every error of a stack in one run, as `vllm-stack check` and `pulumi preview`
print them - the config errors, then what the rules find in the rest of the stack, each once, and
nothing about a default that stood in for a value the stack got wrong."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.paths import PROJECT_DIR
from tests.stack_builders import stack_values
from vllm_serving.findings import Finding, Severity
from vllm_serving.rules.every_error import every_finding, key_path, stack_build, without_keys

BUILD = stack_build(frozenset(), "v100", PROJECT_DIR)
# what the rules say of the shipped v100 stack as it is: warnings only (CC 7.0 runs the hybrid layers
# with Triton kernels, no registry password, the API on every address without a key)
V100_WARNINGS = [("hybrid-triton-below-cc80", "vllm-serving:hardware.gpu"),
                 ("registry-password-missing", "vllm-serving:registryPassword"),
                 ("api-open-on-network", "vllm-serving:network.bindAddress")]
HF = Path(__file__).parent.parent / "fixtures" / "hf"


def _errors(found: list[Finding]) -> list[tuple[str, str]]:
    return [(f.code, f.key) for f in found if f.severity is Severity.ERROR]


def _warnings(found: list[Finding]) -> list[tuple[str, str]]:
    return [(f.code, f.key) for f in found if f.severity is Severity.WARNING]


def test_key_path_maps_a_finding_s_key_to_the_path_inside_the_stack_file() -> None:
    assert key_path("vllm-serving:kubernetes.tolerations[0].key") == ["kubernetes", "tolerations", 0, "key"]
    assert key_path("vllm-serving:engine.env.VLLM_CPU_KVCACHE_SPACE") == ["engine", "env", "VLLM_CPU_KVCACHE_SPACE"]
    assert key_path("vllm-serving:waivers[12]") == ["waivers", 12]
    assert key_path("vllm-serving:apiKey") == ["apiKey"]
    assert key_path("Pulumi.v100.yaml") is None  # a stack file's path, no config key
    assert key_path("other-project:engine.dtype") is None


def test_without_keys_removes_each_named_key_and_nothing_else() -> None:
    values: dict[str, Any] = {
        "vllm-serving:engine": {"dtype": "half", "maxModelLen": "8k", "extraArgs": ["--a", "--b", "--c"]},
        "model": {"name": "Qwen3.5-27B", "hostPath": "models"},  # a section written without the namespace
        "vllm-serving:image": {"tag": "v0.19.1"},
        "vllm-serving:apiKey": "k",
    }
    out = without_keys(values, {"vllm-serving:engine.maxModelLen", "vllm-serving:engine.extraArgs[1]",
                                "vllm-serving:model.hostPath", "vllm-serving:image", "vllm-serving:network.port",
                                "vllm-serving:engine.extraArgs[7]", "Pulumi.v100.yaml"})
    assert out == {"vllm-serving:engine": {"dtype": "half", "extraArgs": ["--a", "--c"]},
                   "model": {"name": "Qwen3.5-27B"}, "vllm-serving:apiKey": "k"}
    assert values["vllm-serving:engine"]["maxModelLen"] == "8k" and "vllm-serving:image" in values  # untouched


def test_a_valid_stack_gets_the_rules_findings_alone() -> None:
    found = every_finding(stack_values("v100"), BUILD)
    assert _errors(found) == [] and _warnings(found) == V100_WARNINGS


def test_a_type_error_and_a_rule_error_elsewhere_come_together_once_each_errors_first() -> None:
    """maxModelLen '8k' does not parse; bfloat16 on a V100 (CC 7.0, no bf16) is an error of the same section."""
    found = every_finding(stack_values("v100", engine={"maxModelLen": "8k", "dtype": "bfloat16"}), BUILD)
    assert _errors(found) == [("config-type", "vllm-serving:engine.maxModelLen"),
                              ("dtype-bf16-unsupported", "vllm-serving:engine.dtype")]
    assert _warnings(found) == V100_WARNINGS
    assert [f.severity for f in found] == sorted((f.severity for f in found), key=lambda s: s is not Severity.ERROR)


def test_nothing_is_said_of_the_default_that_stood_in() -> None:
    """TP 'eight' does not parse: TP 1 stands in for the second look, and 27B of weights on one V100 would
    not fit - not this stack's problem. Written by the user, TP 1 is refused for exactly that."""
    found = every_finding(stack_values("v100", engine={"tensorParallelSize": "eight"}), BUILD)
    assert _errors(found) == [("config-type", "vllm-serving:engine.tensorParallelSize")]
    written = every_finding(stack_values("v100", engine={"tensorParallelSize": 1}), BUILD)
    assert "weights-exceed-budget" in {code for code, _ in _errors(written)}


def test_a_bad_required_path_does_not_hide_the_rest_and_its_stand_in_is_never_shown() -> None:
    found = every_finding(stack_values("v100", model={"hostPath": "models/qwen"}, image={"tag": "latest"}), BUILD)
    errors = _errors(found)
    assert errors[0] == ("config-invalid", "vllm-serving:model.hostPath")
    assert ("image-latest", "vllm-serving:image.tag") in errors
    assert len(errors) == len(set(errors))
    assert not [f for f in found if "stand-in" in f.message + f.fix]


def test_a_waiver_with_a_bad_field_waives_nothing() -> None:
    """Its reason is not text: the whole entry goes, so what it would waive is reported with the error."""
    values = stack_values("v100", image={"tag": "latest"})
    values["vllm-serving:waivers"] = [{"code": "image-latest", "reason": 5}]
    errors = _errors(every_finding(values, BUILD))
    assert errors[0] == ("config-type", "vllm-serving:waivers[0].reason")
    assert ("image-latest", "vllm-serving:image.tag") in errors
    assert not [code for code, _ in errors if code.startswith("waiver-")]


def test_stack_build_reads_a_relative_config_file_from_the_project_directory(tmp_path: Path) -> None:
    shutil.copy(HF / "qwen3-4b.config.json", tmp_path / "qwen3-4b.json")
    values = stack_values("v100", model={"name": None, "configFile": "qwen3-4b.json"})
    spec = stack_build(frozenset(), "v100", tmp_path)(values)
    assert (spec.stack, spec.model.architecture, spec.model.num_hidden_layers) == ("v100", "Qwen3ForCausalLM", 36)


def test_nothing_is_said_of_keys_under_a_section_that_stood_in() -> None:
    """An engine section that is no mapping: vLLM's defaults stand in, and what the rules say of them (auto
    dtype on a V100, TP 1 on 4 GPUs) is about no key the stack wrote. Likewise the API open on every
    address of a network section that stood in."""
    values = stack_values("v100")
    values["vllm-serving:engine"] = 8
    found = every_finding(values, BUILD)
    assert _errors(found) == [("config-type", "vllm-serving:engine")] and _warnings(found) == V100_WARNINGS
    values = stack_values("v100")
    values["vllm-serving:network"] = "x"
    assert ("api-open-on-network", "vllm-serving:network.bindAddress") not in _warnings(every_finding(values, BUILD))
