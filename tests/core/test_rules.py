"""Each rule: one stack that trips it and one that passes it, both derived from a shipped stack.

A case is (code, base stack, edits that trip, edits that pass); edits go through `edit`, i.e.
`settings.model_copy(update=...)` per section. Plus: the shipped stacks, ordering, the named
invalid stack files under tests/stacks/invalid/.
"""

from __future__ import annotations

from typing import Any

import pytest

from vllm_serving import rules
from vllm_serving.catalog.models import MODELS
from vllm_serving.findings import Finding, Severity
from vllm_serving.settings.kubernetes import ServiceSettings
from vllm_serving.stack_files.loader import load_settings, read_stack_file

from .conftest import ROOT, edit, shipped_settings, spec_of

QWEN = MODELS["Qwen3.5-27B"]
FP16_SHY = QWEN.model_copy(update={"refuses_float16": True})
NO_MTP = MODELS["Qwen3.6-27B-FP8"].model_copy(update={"mtp_layers": 0})
ROPE = ("--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 2.0}}')

Edits = dict[str, Any]
# (code, stack, trip edits, pass edits)
CASES: list[tuple[str, str, Edits, Edits]] = [
    ("dtype-bf16-unsupported", "v100", {"engine": {"dtype": "bfloat16"}}, {}),
    ("dtype-auto-falls-back-to-half", "v100", {"engine": {"dtype": None}}, {}),
    ("dtype-fp16-refused", "v100", {"model": {"name": None, "architecture": FP16_SHY}},
     {"model": {"name": None, "architecture": FP16_SHY}, "hardware": {"gpu": "A100-80GB"},
      "engine": {"dtype": "bfloat16"}}),
    ("fp8-weights-unsupported", "v100", {"model": {"name": "Qwen3.5-27B-FP8"}}, {}),
    ("fp8-weights-weight-only", "a100", {}, {"hardware": {"gpu": "H100-80GB"}}),
    ("fp8-kv-cache-unsupported", "v100", {"engine": {"kv_cache_dtype": "fp8"}},
     {"engine": {"kv_cache_dtype": "auto"}}),
    ("fp8-kv-cache-backend", "a100", {"engine": {"attention_backend": "FLASH_ATTN"}}, {}),
    ("fp8-kv-cache-backend-unpinned", "a100", {"engine": {"attention_backend": None}}, {}),
    ("quantization-cc-too-low", "v100", {"engine": {"quantization": "awq"}},
     {"engine": {"quantization": "gptq"}}),
    ("attention-backend-unsupported", "v100", {"engine": {"attention_backend": "FLASH_ATTN"}},
     {"engine": {"attention_backend": "TRITON_ATTN"}}),
    ("tp-heads-indivisible", "a100",
     {"hardware": {"count": 16, "device_ids": None}, "engine": {"tensor_parallel_size": 16}}, {}),
    ("tp-kv-heads-indivisible", "a100",
     {"hardware": {"device_ids": (6, 7, 8)}, "engine": {"tensor_parallel_size": 3}}, {}),
    ("tp-linear-heads-indivisible", "a100",
     {"hardware": {"device_ids": (6, 7, 8)}, "engine": {"tensor_parallel_size": 3}}, {}),
    ("parallel-exceeds-gpus", "a100", {"hardware": {"device_ids": (6, 7)}}, {}),
    ("parallel-gpus-idle", "a100", {"hardware": {"device_ids": None}}, {}),
    ("parallel-exceeds-host", "v100", {"engine": {"tensor_parallel_size": 16}}, {}),
    ("max-model-len-exceeds-model", "a100", {"engine": {"max_model_len": 300_000}},
     {"engine": {"max_model_len": 300_000, "extra_args": ROPE}}),
    ("weights-exceed-budget", "v100",
     {"hardware": {"count": 1}, "engine": {"tensor_parallel_size": None}}, {}),
    ("kv-cache-too-small", "v100", {"engine": {"gpu_memory_utilization": 0.35}}, {}),
    ("gpu-memory-utilization-high", "a100", {"engine": {"gpu_memory_utilization": 0.97}}, {}),
    ("speculative-mtp-unsupported", "a100", {"model": {"name": None, "architecture": NO_MTP}}, {}),
    ("speculative-method-deprecated", "a100",
     {"engine": {"speculative_config": {"method": "qwen3_next_mtp", "num": 1}}}, {}),
    ("speculative-tokens-many", "a100", {},
     {"engine": {"speculative_config": {"method": "mtp", "num": 1}}}),
    ("tool-parser-without-auto-choice", "v100", {"engine": {"enable_auto_tool_choice": False}}, {}),
    ("auto-tool-choice-without-parser", "v100", {"engine": {"tool_call_parser": None}}, {}),
    ("tool-parser-unknown", "v100", {"engine": {"tool_call_parser": "qwen4_magic"}}, {}),
    ("reasoning-parser-unknown", "v100", {"engine": {"reasoning_parser": "qwen9"}}, {}),
    ("reasoning-parser-other-family", "v100", {"engine": {"reasoning_parser": "deepseek_r1"}}, {}),
    ("tool-parser-other-family", "v100", {"engine": {"tool_call_parser": "llama3_json"}},
     {"engine": {"tool_call_parser": "hermes"}}),
    ("env-obsolete", "v100", {"engine": {"env": {"VLLM_USE_V1": "0"}}}, {}),
    ("env-unknown", "v100", {"engine": {"env": {"VLLM_USE_MODELSCOP": "false"}}},
     {"engine": {"env": {"VLLM_LOGGING_LEVEL": "DEBUG", "VLLM_ROCM_USE_AITER": "0", "NCCL_DEBUG": "1"}}}),
    ("trust-remote-code-native", "v100", {"engine": {"trust_remote_code": True}}, {}),
    ("image-latest", "a100", {"image": {"tag": "latest"}},
     {"image": {"tag": "latest", "digest": "sha256:" + "0" * 64}}),
    ("image-tag-unpinned", "a100", {"image": {"tag": "nightly"}}, {"image": {"tag": "v0.19.1-cu130"}}),
    ("image-cuda13-volta", "v100", {"image": {"tag": "v0.20.0"}}, {"image": {"tag": "v0.20.0-cu129"}}),
    ("image-volta-unverified", "v100", {}, {"hardware": {"gpu": "T4"}}),
    ("image-too-old-for-model", "v100", {"image": {"tag": "v0.16.0"}}, {"image": {"tag": "v0.17.0"}}),
    ("container-privileged", "v100", {"container": {"privileged": True}}, {}),
    ("shm-too-small", "a100", {"container": {"shm_size": 2 * 2**30}},
     {"container": {"shm_size": None, "ipc_mode": "host"}}),
    ("registry-password-missing", "v100", {}, {"secrets_set": frozenset({"registryPassword"})}),
    ("docker-keys-on-kubernetes", "a100-k8s", {"hardware": {"device_ids": (0, 1, 2, 3)}}, {}),
    ("api-open-on-network", "v100", {}, {"network": {"bind_address": "127.0.0.1"}}),
    ("api-open-outside-cluster", "a100-k8s", {"kubernetes": {"service": ServiceSettings(type="NodePort")}},
     {"kubernetes": {"service": ServiceSettings(type="NodePort")}, "secrets_set": frozenset({"apiKey"})}),
]


def _apply(stack: str, edits: Edits) -> list[Finding]:
    settings = shipped_settings(stack)
    if "speculative_config" in edits.get("engine", {}):
        spec = edits["engine"]["speculative_config"]
        current = settings.engine.speculative_config
        assert current is not None
        edits = {**edits, "engine": {**edits["engine"], "speculative_config": current.model_copy(
            update={"method": spec["method"], "num_speculative_tokens": spec["num"]})}}
    return rules.check(spec_of(edit(settings, **edits)))


@pytest.mark.parametrize(("code", "stack", "trip", "ok"), CASES, ids=[c[0] for c in CASES])
def test_rule_trips(code: str, stack: str, trip: Edits, ok: Edits) -> None:
    rule = rules.RULES_BY_CODE[code]
    hits = [f for f in _apply(stack, trip) if f.code == code]
    assert len(hits) == 1, f"{code} did not trip"
    finding = hits[0]
    assert finding.severity == rule.severity and finding.key == rule.key
    assert finding.message and finding.fix and "{" not in finding.message + finding.fix


@pytest.mark.parametrize(("code", "stack", "trip", "ok"), CASES, ids=[c[0] for c in CASES])
def test_rule_passes(code: str, stack: str, trip: Edits, ok: Edits) -> None:
    assert code not in {f.code for f in _apply(stack, ok)}


def test_every_rule_has_a_case() -> None:
    assert sorted(c[0] for c in CASES) == sorted(rules.RULES_BY_CODE)


def test_codes_are_kebab_case_and_keys_namespaced() -> None:
    for rule in rules.RULES:
        assert rule.code == rule.code.lower() and " " not in rule.code and "_" not in rule.code
        assert rule.key.startswith("vllm-serving:")
        assert rule.what and rule.why and rule.source


@pytest.mark.parametrize(("stack", "warnings"), [
    ("v100", ["image-volta-unverified", "registry-password-missing", "api-open-on-network"]),
    ("a100", ["fp8-weights-weight-only", "speculative-tokens-many", "api-open-on-network"]),
    ("a100-k8s", ["fp8-weights-weight-only", "speculative-tokens-many"]),
])
def test_shipped_stacks_have_no_errors(stack: str, warnings: list[str]) -> None:
    findings = rules.check(spec_of(shipped_settings(stack)))
    assert [f.code for f in findings if f.severity == Severity.ERROR] == []
    assert [f.code for f in findings] == warnings


def test_errors_first_and_deterministic() -> None:
    settings = edit(shipped_settings("v100"), engine={"dtype": None, "kv_cache_dtype": "fp8"},
                    container={"privileged": True})
    first = rules.check(spec_of(settings))
    severities = [f.severity for f in first]
    assert severities == sorted(severities, key=lambda s: s != Severity.ERROR)
    assert severities[0] == Severity.ERROR and Severity.WARNING in severities
    assert first == rules.check(spec_of(settings))


@pytest.mark.parametrize(("name", "code"), [
    ("v100-bf16", "dtype-bf16-unsupported"),
    ("v100-fp8-kv", "fp8-kv-cache-unsupported"),
    ("tp3", "tp-kv-heads-indivisible"),
    ("weights-dont-fit", "weights-exceed-budget"),
])
def test_invalid_stack_files(name: str, code: str) -> None:
    stack_file = read_stack_file(ROOT / "tests" / "stacks" / "invalid" / f"{name}.yaml")
    findings = rules.check(spec_of(load_settings(stack_file), stack_file.stack))
    errors = [f for f in findings if f.severity == Severity.ERROR]
    assert [f.code for f in errors] == [code]
    assert errors[0].fix
