"""engine_flags.py at its boundaries: parsers against the image's release, env vars, remote code."""

from __future__ import annotations

import pytest

from tests.rules.boundary import Boundary, check_boundary, codes
from vllm_serving.catalog.models import MODELS
from vllm_serving.engine import release_facts
from vllm_serving.findings import config_key
from vllm_serving.rules.engine_flags import _bad_value


def engine(**fields: object) -> dict[str, object]:
    return {"engine": fields}


def on(tag: str, **fields: object) -> dict[str, object]:
    return {"engine": fields, "image": {"tag": tag}}


OTHER_FAMILY = {"name": None, "architecture": MODELS["Qwen3.5-27B"].model_copy(update={"family": "newfamily"})}
LLAMA = {"name": None, "architecture": MODELS["Qwen3.5-27B"].model_copy(
    update={"architecture": "LlamaForCausalLM", "min_vllm_version": None})}
CUSTOM = {"name": None, "architecture": MODELS["Qwen3.5-27B"].model_copy(
    update={"architecture": "MyForCausalLM", "min_vllm_version": None})}

DATED = {"name": None, "architecture": MODELS["Qwen3.5-27B"].model_copy(
    update={"architecture": "Qwen3OmniMoeForConditionalGeneration"})}

BOUNDARIES = [
    Boundary("tool-parser-without-auto-choice", "v100", engine(enable_auto_tool_choice=False),
             engine(enable_auto_tool_choice=True), "auto tool choice off -> on"),
    Boundary("auto-tool-choice-without-parser", "v100", engine(tool_call_parser=None),
             engine(tool_call_parser="qwen3_coder"), "no parser -> qwen3_coder", says=("qwen3_coder, qwen3_xml",)),
    Boundary("auto-tool-choice-without-parser", "v100", {**engine(tool_call_parser=None), "model": OTHER_FAMILY},
             {**engine(tool_call_parser="hermes"), "model": OTHER_FAMILY}, "a family with no parser: none -> hermes",
             fix="set engine.toolCallParser, for this model: see vLLM's docs for this model"),
    Boundary("tool-parser-unknown", "v100", engine(tool_call_parser="qwen3_code"),
             engine(tool_call_parser="qwen3_coder"), "qwen3_code -> qwen3_coder", says=("v0.19.1",)),
    Boundary("tool-parser-unknown", "v100", engine(tool_call_parser="qwen3_code"),
             engine(tool_call_parser="qwen3_code", enable_auto_tool_choice=False),
             "auto tool choice on -> off (vLLM never loads the parser)"),
    Boundary("tool-parser-unknown", "v100", engine(tool_call_parser="my_parser"),
             engine(tool_call_parser="my_parser", extra_args=("--tool-parser-plugin", "/plugins/mine.py")),
             "+ --tool-parser-plugin"),
    Boundary("tool-parser-unknown", "v100", on("v0.19.1", tool_call_parser="hy_v3"),
             on("v0.20.2", tool_call_parser="hy_v3"), "hy_v3: v0.19.1 -> v0.20.2 (added there)"),
    Boundary("reasoning-parser-unknown", "v100", engine(reasoning_parser="qwen9"), engine(reasoning_parser="qwen3"),
             "qwen9 -> qwen3", says=("use one the release registers, for this model: qwen3",)),
    Boundary("reasoning-parser-unknown", "v100", on("v0.19.1", reasoning_parser="mimo"),
             on("v0.20.2", reasoning_parser="mimo"), "mimo: v0.19.1 -> v0.20.2"),
    Boundary("reasoning-parser-unknown", "v100", engine(reasoning_parser="mine"),
             engine(reasoning_parser="mine", extra_args=("--reasoning-parser-plugin=/plugins/mine.py",)),
             "+ --reasoning-parser-plugin=..."),
    Boundary("reasoning-parser-other-family", "v100", engine(reasoning_parser="deepseek_r1"),
             engine(reasoning_parser="qwen3"), "deepseek_r1 -> qwen3", fix="use qwen3"),
    Boundary("tool-parser-other-family", "v100", engine(tool_call_parser="llama3_json"),
             engine(tool_call_parser="hermes"), "llama3_json -> hermes (fits many families)",
             fix="use qwen3_coder, qwen3_xml"),
    Boundary("env-obsolete", "v100", engine(env={"VLLM_USE_V1": "1"}), engine(env={"VLLM_USE_V2_MODEL_RUNNER": "1"}),
             "VLLM_USE_V1 -> VLLM_USE_V2_MODEL_RUNNER"),
    Boundary("env-obsolete", "v100", engine(env={"VLLM_USE_V1": "0", "VLLM_ATTENTION_BACKEND": "FLASHINFER"}),
             engine(env={"VLLM_USE_MODELSCOPE": "false"}), "two obsolete variables -> none",
             says=("sets VLLM_ATTENTION_BACKEND, VLLM_USE_V1,", "--attention-backend); VLLM_USE_V1: drop it")),
    Boundary("env-unknown", "v100", engine(env={"VLLM_USE_MODELSCOP": "false"}),
             engine(env={"VLLM_USE_MODELSCOPE": "false"}), "a misspelling -> the variable"),
    Boundary("env-unknown", "v100", engine(env={"VLLM_USE_MODELSCOP": "false", "VLLM_A_TYPO": "1"}),
             engine(env={"VLLM_USE_MODELSCOPE": "false", "VLLM_PORT": "1"}), "two misspellings -> none",
             says=("sets VLLM_A_TYPO, VLLM_USE_MODELSCOP,",)),
    Boundary("env-unknown", "v100", engine(env={"VLLM_FLASH_ATTN_VERSION": "3"}),
             engine(env={"VLLM_BATCH_INVARIANT": "1"}), "a variable v0.19.1 lacks -> one it has"),
    Boundary("env-unknown", "v100", engine(env={"VLLM_ROCM_NOT_A_VARIABLE": "1"}),
             engine(env={"VLLM_ROCM_USE_AITER": "0", "NCCL_DEBUG": "INFO"}), "no prefix passes unchecked"),
    Boundary("env-gpu-selection", "a100", engine(env={"CUDA_VISIBLE_DEVICES": "6,7,8,9"}),
             engine(env={"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}), "CUDA_VISIBLE_DEVICES -> CUDA_DEVICE_ORDER",
             fix="remove it from engine.env and choose the host's GPUs with hardware.deviceIds"),
    Boundary("env-gpu-runtime-selection", "a100", engine(env={"NVIDIA_VISIBLE_DEVICES": "all"}),
             engine(env={"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}),
             "NVIDIA_VISIBLE_DEVICES -> NVIDIA_DRIVER_CAPABILITIES", says=("NVIDIA_VISIBLE_DEVICES=all",)),
    Boundary("env-gpu-runtime-selection", "a100-k8s", engine(env={"NVIDIA_VISIBLE_DEVICES": "all"}),
             engine(env={}), "on Kubernetes too: set -> unset"),
    Boundary("trust-remote-code-native", "v100", engine(trust_remote_code=True), engine(trust_remote_code=False),
             "trustRemoteCode true -> false"),
    Boundary("trust-remote-code-native", "v100", engine(trust_remote_code=True),
             {**engine(trust_remote_code=True), "model": CUSTOM}, "a native architecture -> one vLLM lacks"),
    # a catalog entry with a minimum vLLM version is an architecture vLLM implements from that release
    # (Qwen3OmniMoeForConditionalGeneration: v0.19.1 model_executor/models/registry.py), listed in
    # NATIVE_ARCHITECTURES or not
    Boundary("trust-remote-code-native", "v100", {**engine(trust_remote_code=True), "model": DATED},
             {**engine(trust_remote_code=True), "model": CUSTOM}, "a catalog minimum vLLM version -> none",
             says=("Qwen3OmniMoeForConditionalGeneration",)),
    Boundary("trust-remote-code-native", "v100", {**engine(trust_remote_code=True), "model": LLAMA},
             {**engine(trust_remote_code=False), "model": LLAMA}, "Llama (no catalog minimum version): true -> false"),
    Boundary("env-value-invalid", "v100", engine(env={"VLLM_FLOAT32_MATMUL_PRECISION": "fast"}),
             engine(env={"VLLM_FLOAT32_MATMUL_PRECISION": "HIGH"}), "a choice: fast -> HIGH (case-insensitive)",
             key=config_key("engine", "env", "VLLM_FLOAT32_MATMUL_PRECISION"), says=("highest, high, medium",)),
    Boundary("env-value-invalid", "v100", engine(env={"VLLM_KV_CACHE_LAYOUT": "hnd"}),
             engine(env={"VLLM_KV_CACHE_LAYOUT": "HND"}), "case-sensitive choices: hnd -> HND",
             key=config_key("engine", "env", "VLLM_KV_CACHE_LAYOUT")),
    Boundary("env-value-invalid", "v100", engine(env={"VLLM_MLA_DISABLE": "true"}),
             engine(env={"VLLM_MLA_DISABLE": "1"}), "bool(int(...)): true -> 1",
             key=config_key("engine", "env", "VLLM_MLA_DISABLE"), says=("a whole number",)),
    # vLLM v0.19.1 envs.py: VLLM_GPT_OSS_SYSTEM_TOOL_MCP_LABELS is env_set_with_choices, a comma list
    # whose every item must be a choice ("browser" is not one).
    Boundary("env-value-invalid", "v100", engine(env={"VLLM_GPT_OSS_SYSTEM_TOOL_MCP_LABELS": "container,browser"}),
             engine(env={"VLLM_GPT_OSS_SYSTEM_TOOL_MCP_LABELS": "container, web_search_preview"}),
             "a comma list: container,browser -> container, web_search_preview",
             key=config_key("engine", "env", "VLLM_GPT_OSS_SYSTEM_TOOL_MCP_LABELS"),
             says=("a comma list of container, code_interpreter, web_search_preview",)),
    Boundary("env-layer-partition", "v100", engine(env={"VLLM_PP_LAYER_PARTITION": "32,32"}),
             engine(env={"VLLM_PP_LAYER_PARTITION": "64"}), "PP 1: two stages named -> one of 64 layers",
             says=("2 stages for 1",)),
    Boundary("env-layer-partition", "v100", {"engine": {"tensor_parallel_size": 4, "pipeline_parallel_size": 2,
                                                        "env": {"VLLM_PP_LAYER_PARTITION": "32,31"}}},
             {"engine": {"tensor_parallel_size": 4, "pipeline_parallel_size": 2,
                         "env": {"VLLM_PP_LAYER_PARTITION": "33,31"}}},
             "64 layers over PP 2: 32+31 -> 33+31", says=("sums to 63 layers, the model has 64",)),
    Boundary("env-layer-partition", "v100", {"engine": {"tensor_parallel_size": 4, "pipeline_parallel_size": 2,
                                                        "env": {"VLLM_PP_LAYER_PARTITION": "32;32"}}},
             {"engine": {"tensor_parallel_size": 4, "pipeline_parallel_size": 2,
                         "env": {"VLLM_PP_LAYER_PARTITION": "32,32"}}}, "32;32 -> 32,32"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=[c.id for c in BOUNDARIES])
def test_boundary(case: Boundary) -> None:
    check_boundary(case)


@pytest.mark.parametrize("parser", ["qwen3_coder", "hermes", "pythonic"])
def test_shipped_tool_parsers_pass(parser: str) -> None:
    assert not codes("v100", engine(tool_call_parser=parser)) & {"tool-parser-unknown", "tool-parser-other-family"}


def test_case_insensitive_choices_compare_both_sides_lowered() -> None:
    # vLLM v0.19.1 vllm/envs.py env_with_choices: with case_sensitive=False it compares value.lower()
    # with [choice.lower() for choice in actual_choices], so a choice written in capitals takes any case
    check = release_facts.EnvValue(choices=("Highest", "High"), case_sensitive=False)
    assert _bad_value("high", check) is None
    assert _bad_value("HIGHEST", check) is None
    assert _bad_value("low", check) == "takes one of Highest, High"
