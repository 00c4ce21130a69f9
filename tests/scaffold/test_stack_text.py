"""The stack file `vllm-stack init` writes, as the newcomer reads it: every key with the comment
that says what it is and why it has its value.

The engine choice is written out by hand here (the planner's figures are not this module's to
check), and so is every expected line; a comment wrapped over several lines is read as the one
sentence it is, so only its words are compared, not where the wrap falls. Facts quoted: Qwen3.5-27B's
config.json (24 attention heads, 4 KV heads, 16/48 linear-attention heads, 262,144 positions,
model_type qwen3_5), NVIDIA's compute capabilities (V100 7.0, A100 8.0) and GPU feature
discovery's product label for the A100-SXM4-80GB.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import yaml

from vllm_serving.catalog.gpus import GpuSpec, find_gpu
from vllm_serving.catalog.models import ModelArchitecture, find_model
from vllm_serving.scaffold.engine_choice import EngineChoice
from vllm_serving.scaffold.stack_text import DOCKER_HUB_REPOSITORY, NewStack, container_name, stack_text


def _found(value: Any) -> Any:
    assert value is not None
    return value


QWEN35: ModelArchitecture = _found(find_model("Qwen3.5-27B"))
V100: GpuSpec = _found(find_gpu("V100-32GB"))
A100: GpuSpec = _found(find_gpu("A100-80GB"))

ENGINE = EngineChoice(tp=8, dp=1, roomy=True, smallest_tp=4, dtype="half", gpu_memory_utilization=0.9,
                      max_model_len=262144, limited_by="model", concurrency=4.6, weights_gib_per_gpu=6.54,
                      reasoning_parser="qwen3", tool_call_parser="qwen3_coder")
STACK = NewStack(name="mine", command="vllm-stack init mine --gpu V100-32GB --count 8 --model Qwen3.5-27B",
                 target="docker", gpu=V100, count=8, model=QWEN35, model_name="Qwen3.5-27B", config_file=None,
                 weights="/models/Qwen3.5-27B", served_name="qwen3.5-27b", registry=None,
                 repository=DOCKER_HUB_REPOSITORY, tag="v0.19.1", engine=ENGINE)


def stack(engine: dict[str, Any] | None = None, **fields: Any) -> NewStack:
    return msgspec.structs.replace(STACK, engine=msgspec.structs.replace(ENGINE, **(engine or {})), **fields)


COMMENTED_KEY = re.compile(r"[a-z][A-Za-z]*: \S+")
"""A key left commented out for the user to fill in (`# username: robot-vllm`): a line of its own."""


def read(s: NewStack) -> list[str]:
    """The file's lines, each run of a section's comment lines joined into the sentence it wraps."""
    out: list[str] = []
    for line in stack_text(s).splitlines():
        text = line.removeprefix("    # ")
        wrapped = (text != line and out and out[-1].startswith("    # ")
                   and not COMMENTED_KEY.fullmatch(text) and not COMMENTED_KEY.fullmatch(out[-1][6:]))
        if wrapped:
            out[-1] += " " + text
        else:
            out.append(line)
    return out


def section(s: NewStack, name: str) -> list[str]:
    """The lines of one `vllm-serving:<name>` section, its head excluded."""
    lines = read(s)
    start = lines.index(f"  vllm-serving:{name}:") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("  vllm-serving:")), len(lines))
    return lines[start:end]


def comment_of(s: NewStack, section_name: str, key: str) -> str:
    """The comment right above `key` in a section."""
    lines = section(s, section_name)
    at = next(i for i, line in enumerate(lines) if line.startswith(f"    {key}:"))
    assert lines[at - 1].startswith("    # "), lines[at - 1]
    return lines[at - 1].removeprefix("    # ")


# --- the whole file -------------------------------------------------------------------------------

def test_the_header_and_the_sections_of_a_docker_stack() -> None:
    lines = read(STACK)
    assert lines[:5] == [
        "# Stack mine, written by: vllm-stack init mine --gpu V100-32GB --count 8 --model Qwen3.5-27B",
        "# Check it: vllm-stack check mine; see what it deploys: vllm-stack plan mine;",
        "# deploy it: pulumi stack select mine --create && pulumi up -s mine.",
        "# Every key is documented in vllm_serving/settings/ (one module per section).",
        "config:",
    ]
    heads = [line.strip() for line in lines if line.startswith("  vllm-serving:")]
    assert heads == ["vllm-serving:target:", "vllm-serving:hardware:", "vllm-serving:image:", "vllm-serving:model:",
                     "vllm-serving:engine:", "vllm-serving:container:", "vllm-serving:network:"]


def test_the_file_reads_back_as_the_choice() -> None:
    config = yaml.safe_load(stack_text(STACK))["config"]
    assert config["vllm-serving:engine"] == {
        "tensorParallelSize": 8, "dtype": "half", "gpuMemoryUtilization": 0.9, "maxModelLen": 262144,
        "reasoningParser": "qwen3", "enableAutoToolChoice": True, "toolCallParser": "qwen3_coder"}
    assert config["vllm-serving:hardware"] == {"gpu": "V100-32GB", "count": 8}
    assert config["vllm-serving:model"] == {"name": "Qwen3.5-27B", "hostPath": "/models/Qwen3.5-27B",
                                            "servedName": "qwen3.5-27b"}


def test_target_and_hardware() -> None:
    assert section(STACK, "target") == [
        "    # A Docker host: this machine's socket. From a workstation instead:",
        "    # dockerHost: ssh://deploy@gpu-host",
        "    kind: docker",
    ]
    assert section(STACK, "hardware") == [
        "    # The GPU model (vllm-stack gpus lists them): 32 GiB, compute capability 7.0.",
        "    gpu: V100-32GB",
        "    # GPUs the host has.",
        "    count: 8",
    ]


def test_a_docker_host_with_gpus_left_over_names_the_ones_the_container_gets() -> None:
    """TP 4 on six GPUs (a power of two, as TP must split the heads): two stay free."""
    six = stack({"tp": 4, "smallest_tp": 4}, count=6)
    assert section(six, "hardware")[-3:] == [
        "    count: 6",
        "    # The container gets GPUs 0-3; the other 2 stay free (TP must split the heads evenly).",
        "    deviceIds: [0, 1, 2, 3]",
    ]
    two_copies = stack({"tp": 2, "dp": 2, "smallest_tp": 2}, count=6)
    assert section(two_copies, "hardware")[-2] == (
        "    # The container gets GPUs 0-3; the other 2 stay free (TP must split the heads evenly).")
    # on Kubernetes the pod asks for its GPUs; no device ids
    assert "deviceIds" not in stack_text(msgspec.structs.replace(six, target="kubernetes"))


# --- image and model ------------------------------------------------------------------------------

def test_the_official_image_or_the_registrys() -> None:
    """Without a registry: vLLM's official image on Docker Hub, vllm/vllm-openai (vLLM docs,
    deployment/docker.md)."""
    assert section(STACK, "image") == [
        "    # The official vLLM image from Docker Hub.",
        "    repository: vllm/vllm-openai",
        "    # A pinned release: the rules and the capacity planner know what this one accepts.",
        "    tag: v0.19.1",
    ]
    assert section(stack(registry="harbor.local:30000"), "image") == [
        "    # The vLLM image from your registry harbor.local:30000.",
        "    registry: harbor.local:30000",
        "    repository: vllm/vllm-openai",
        "    # A pinned release: the rules and the capacity planner know what this one accepts.",
        "    tag: v0.19.1",
        "    # If the registry needs a login: the user here, the password as a secret "
        "(pulumi config set --secret registryPassword).",
        "    # username: robot-vllm",
    ]


def test_a_catalog_model_or_its_config_file() -> None:
    weights = [
        "    # The weights directory on the GPU host, mounted read-only. Put the weights there, or "
        "change the path to where yours are.",
        "    hostPath: /models/Qwen3.5-27B",
        "    # The name clients put in a request's `model` field.",
        "    servedName: qwen3.5-27b",
    ]
    assert section(STACK, "model") == [
        "    # A catalog model (vllm-stack models lists them): the catalog holds its architecture facts.",
        "    name: Qwen3.5-27B",
        *weights,
    ]
    own = stack(model_name=None, config_file="models/qwen3.5-27b/config.json")
    assert section(own, "model") == [
        "    # The model's Hugging Face config.json (path relative to the project): its architecture "
        "facts (heads, layers, context) size the KV cache and are checked by the rules.",
        "    configFile: models/qwen3.5-27b/config.json",
        *weights,
    ]


# --- engine: why each value -----------------------------------------------------------------------

HEADS = "24 attention heads and 4 KV heads (16/48 linear-attention heads)"


def test_the_largest_tp_says_why_fewer_gpus_are_not_used() -> None:
    assert comment_of(STACK, "engine", "tensorParallelSize") == (
        f"GPUs one copy of the model is split across: the largest power of two up to 8 that splits the {HEADS} "
        "evenly; 6.5 GiB of weights per GPU. 4 GPUs would hold it too, but with less KV cache than weights: one "
        "engine across the 8 serves longer requests than 2 copies would (--dp 2 writes copies).")
    one = stack({"smallest_tp": 1})
    assert comment_of(one, "engine", "tensorParallelSize").endswith(
        "One GPU would hold it too, but with less KV cache than weights: one engine across the 8 serves longer "
        "requests than 8 copies would (--dp 8 writes copies).")
    # no fewer GPUs serve: nothing to explain, with GPUs for more copies or not
    assert comment_of(stack({"smallest_tp": 8}), "engine", "tensorParallelSize").endswith(
        "evenly; 6.5 GiB of weights per GPU.")
    assert comment_of(stack({"tp": 4, "smallest_tp": 4}), "engine", "tensorParallelSize").endswith(
        "evenly; 6.5 GiB of weights per GPU.")


def test_one_gpu_an_asked_tp_and_copies_say_so() -> None:
    assert comment_of(stack({"tp": 1, "smallest_tp": 1, "weights_gib_per_gpu": 51.0}), "engine",
                      "tensorParallelSize") == "One GPU holds the whole model: 51.0 GiB of weights per GPU."
    assert comment_of(stack(asked=frozenset({"tp"})), "engine", "tensorParallelSize") == (
        "GPUs one copy of the model is split across, as asked (--tp); 6.5 GiB of weights per GPU.")
    copies = stack({"tp": 2, "dp": 4, "smallest_tp": 2, "weights_gib_per_gpu": 25.5})
    assert comment_of(copies, "engine", "tensorParallelSize") == (
        f"GPUs one copy of the model is split across: the smallest power of two that splits the {HEADS} evenly "
        "and leaves a KV cache at least as large as the weights; 25.5 GiB of weights per GPU.")


def test_copies_say_what_they_are_and_how_to_get_one_long_engine_instead() -> None:
    copies = stack({"tp": 2, "dp": 4, "smallest_tp": 2})
    assert comment_of(copies, "engine", "dataParallelSize") == (
        "Engines, each a whole copy of the model on 2 GPU(s) with its own KV cache: the model fits one engine "
        "with room, so independent copies serve more requests at once, with no all-reduce between GPUs on every "
        "layer (over PCIe on cards without NVLink). For the longest requests instead: tensorParallelSize 8, "
        "dataParallelSize 1.")
    assert "    dataParallelSize: 4" in section(copies, "engine")
    asked = stack({"tp": 1, "dp": 2, "smallest_tp": 1}, asked=frozenset({"dp"}))
    assert comment_of(asked, "engine", "dataParallelSize") == (
        "Engines, each a whole copy of the model on 1 GPU(s) with its own KV cache: as asked (--dp). For the "
        "longest requests instead: tensorParallelSize 2, dataParallelSize 1.")
    assert "dataParallelSize" not in stack_text(STACK)


def test_the_dtype_says_why_for_the_gpu() -> None:
    assert comment_of(STACK, "engine", "dtype") == (
        "Compute dtype: V100-32GB (CC 7.0) has no bfloat16 kernels, so the model runs in float16.")
    ampere = stack({"dtype": "bfloat16"}, gpu=A100)
    assert comment_of(ampere, "engine", "dtype") == (
        "Compute dtype: A100-80GB (CC 8.0) computes in bfloat16, the checkpoint's own precision.")
    wide = stack({"dtype": "float32"})
    assert comment_of(wide, "engine", "dtype") == (
        "Compute dtype: V100-32GB (CC 7.0) has no bfloat16 and vLLM refuses qwen3_5 in float16: float32, at "
        "twice the memory.")


def test_the_memory_share_and_the_context_say_where_they_come_from() -> None:
    assert comment_of(STACK, "engine", "gpuMemoryUtilization") == (
        "Share of each GPU's memory vLLM may take, set here so maxModelLen below is sized with it.")
    tail = (" Lower it for more concurrent requests: vllm-stack capacity shows the trade-off. (init refuses GPUs "
            "that cannot hold a 4096-token request.)")
    assert comment_of(STACK, "engine", "maxModelLen") == (
        "Longest request in tokens, prompt plus output: the model's own limit (max_position_embeddings); the KV "
        "cache holds 4.6 such requests." + tail)
    memory = stack({"limited_by": "memory", "max_model_len": 65536, "concurrency": 1.2})
    assert comment_of(memory, "engine", "maxModelLen") == (
        "Longest request in tokens, prompt plus output: the KV cache's limit, rounded down to whole K (the model "
        "allows 262144); the KV cache holds 1.2 such request(s)." + tail)
    asked = stack({"tp": 2, "dp": 4, "max_model_len": 32768, "concurrency": 3.0}, asked=frozenset({"max_model_len"}))
    assert comment_of(asked, "engine", "maxModelLen") == (
        "Longest request in tokens, prompt plus output: as asked (--max-model-len); each engine's KV cache holds "
        "3.0 such request(s)." + tail)


def test_the_parsers_say_where_the_thinking_comes_back() -> None:
    """The message field per release (engine/responses.py: `reasoning` from v0.16, beside the
    deprecated `reasoning_content` from v0.11.1)."""
    assert section(STACK, "engine")[-5:] == [
        "    # Returns the model's thinking apart from the answer, in message.reasoning with v0.19.1.",
        "    reasoningParser: qwen3",
        "    # Tool calls: the model decides when to call one, parsed from its own markup.",
        "    enableAutoToolChoice: true",
        "    toolCallParser: qwen3_coder",
    ]
    older = stack(tag="v0.12.0")
    assert comment_of(older, "engine", "reasoningParser") == (
        "Returns the model's thinking apart from the answer, in message.reasoning (and the deprecated "
        "message.reasoning_content) with v0.12.0.")
    none = stack({"reasoning_parser": None, "tool_call_parser": None})
    assert section(none, "engine")[-1] == (
        "    # No reasoning or tool-call parser is known for model type qwen3_5: add reasoningParser / "
        "toolCallParser (with enableAutoToolChoice) if the model emits them.")


# --- where it runs --------------------------------------------------------------------------------

def test_a_docker_stacks_container_and_network() -> None:
    assert section(STACK, "container") == [
        "    # Fixed name: a replacement deletes the old container first.",
        "    name: vllm-mine",
        "    # NCCL shares tensors between the GPUs through the host's shared memory.",
        "    ipcMode: host",
    ]
    assert section(STACK, "network") == [
        "    # The API answers on this host only. To publish it, set an API key first "
        "(pulumi config set --secret apiKey), then bindAddress: 0.0.0.0.",
        "    bindAddress: 127.0.0.1",
        "    hostPort: 8000",
    ]


def test_a_kubernetes_stacks_target_and_objects() -> None:
    k8s = stack({"dtype": "bfloat16"}, target="kubernetes", gpu=A100)
    assert section(k8s, "target") == [
        "    # The cluster of the current kubeconfig context (pulumi config set kubernetes:context NAME).",
        "    kind: kubernetes",
    ]
    assert "    # GPUs the host has (per node)." in section(k8s, "hardware")
    assert section(k8s, "container") == ["    # The Deployment's and Service's name.", "    name: vllm-mine"]
    assert section(k8s, "kubernetes") == [
        "    # The pod requests tensorParallelSize x dataParallelSize GPUs on a node labelled "
        "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB; the Service stays inside the cluster.",
        "    namespace: vllm",
        "    createNamespace: true",
    ]


def test_the_container_name_is_valid_for_docker_and_kubernetes() -> None:
    """DNS-1123: lower-case letters, digits and '-', starting and ending alphanumeric."""
    assert container_name("Prod_V100.a") == "vllm-prod-v100-a"
    assert container_name("--x--") == "vllm-x"
