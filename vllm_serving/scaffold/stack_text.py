"""The text of a new `Pulumi.<stack>.yaml`: every key `vllm-stack init` chose, each with a comment
saying what it is and why it has that value, so the file is the newcomer's documentation too."""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from vllm_serving.catalog.gpus import GpuSpec
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.engine.defaults import VLLM_PORT
from vllm_serving.engine.responses import reasoning_fields
from vllm_serving.findings import PROJECT
from vllm_serving.planner.capacity import parse_vllm_version
from vllm_serving.scaffold.engine_choice import MIN_USEFUL_CONTEXT, EngineChoice
from vllm_serving.scaffold.yaml_text import comment, comment_lines, scalar

DOCKER_HUB_REPOSITORY = "vllm/vllm-openai"
"""The official image, used when no registry is given."""


class NewStack(msgspec.Struct, frozen=True):
    """What `init` was told, plus what it chose."""

    name: str
    """Stack name: the file is `Pulumi.<name>.yaml`."""
    command: str
    """The command line that wrote the file, quoted in its header."""
    target: Literal["docker", "kubernetes"]
    """target.kind."""
    gpu: GpuSpec
    """The catalog GPU."""
    count: int
    """GPUs on the host (a node, on Kubernetes)."""
    model: ModelArchitecture
    """The model's facts, from the catalog or its config.json."""
    model_name: str | None
    """Catalog name (model.name); None when the facts come from a config file."""
    config_file: str | None
    """model.configFile: the config.json path as the stack file names it."""
    weights: str
    """model.hostPath: the weights directory on the host."""
    served_name: str
    """model.servedName."""
    registry: str | None
    """image.registry; Docker Hub when None."""
    repository: str
    """image.repository."""
    tag: str
    """image.tag."""
    engine: EngineChoice
    """The chosen engine section."""
    asked: frozenset[str] = frozenset()
    """Engine keys the user gave (`tp`, `dp`, `max_model_len`) rather than init chose."""


def container_name(stack: str) -> str:
    """`vllm-<stack>`, lower case, anything but letters, digits and `-` as `-`: valid for Docker
    and as a Kubernetes object name (DNS-1123)."""
    return "vllm-" + re.sub(r"[^a-z0-9-]+", "-", stack.lower()).strip("-")


def _model_lines(s: NewStack) -> list[str]:
    if s.config_file is not None:
        source = [
            "    # The model's Hugging Face config.json (path relative to the project): its architecture",
            "    # facts (heads, layers, context) size the KV cache and are checked by the rules.",
            f"    configFile: {scalar(s.config_file)}",
        ]
    else:
        source = [
            "    # A catalog model (vllm-stack models lists them): the catalog holds its architecture facts.",
            f"    name: {scalar(s.model_name)}",
        ]
    return [
        f"  {PROJECT}:model:",
        *source,
        "    # The weights directory on the GPU host, mounted read-only. Put the weights there, or",
        "    # change the path to where yours are.",
        f"    hostPath: {scalar(s.weights)}",
        "    # The name clients put in a request's `model` field.",
        f"    servedName: {scalar(s.served_name)}",
    ]


def _image_lines(s: NewStack) -> list[str]:
    where = comment_lines(f"The vLLM image from your registry {s.registry}." if s.registry
                          else "The official vLLM image from Docker Hub.")
    lines = [f"  {PROJECT}:image:", *where]
    if s.registry:
        lines.append(f"    registry: {scalar(s.registry)}")
    lines += [
        f"    repository: {scalar(s.repository)}",
        "    # A pinned release: the rules and the capacity planner know what this one accepts.",
        f"    tag: {scalar(s.tag)}",
    ]
    if s.registry:
        lines += [
            "    # If the registry needs a login: the user here, the password as a secret",
            "    # (pulumi config set --secret registryPassword).",
            "    # username: robot-vllm",
        ]
    return lines


def _tp_comment(s: NewStack) -> list[str]:
    m = s.model
    heads = f"{m.num_attention_heads} attention heads and {m.num_key_value_heads} KV heads"
    if m.linear_attention is not None:
        lin = m.linear_attention
        heads += f" ({lin.num_key_heads}/{lin.num_value_heads} linear-attention heads)"
    weights = f"{s.engine.weights_gib_per_gpu:.1f} GiB of weights per GPU"
    if "tp" in s.asked:
        return comment_lines(f"GPUs one copy of the model is split across, as asked (--tp); {weights}.")
    if s.engine.tp == 1:
        return comment_lines(f"One GPU holds the whole model: {weights}.")
    if s.engine.dp > 1:
        return comment_lines(f"GPUs one copy of the model is split across: the smallest power of two that splits the "
                       f"{heads} evenly and leaves a KV cache at least as large as the weights; {weights}.")
    copies = s.count // s.engine.smallest_tp
    fewer = "One GPU" if s.engine.smallest_tp == 1 else f"{s.engine.smallest_tp} GPUs"
    why_not = (f" {fewer} would hold it too, but with less KV cache than weights: one engine across the "
               f"{s.engine.tp} serves longer requests than {copies} copies would (--dp {copies} writes copies)."
               if s.engine.smallest_tp < s.engine.tp and copies > 1 else "")
    return comment_lines(f"GPUs one copy of the model is split across: the largest power of two up to {s.count} "
                   f"that splits the {heads} evenly; {weights}.{why_not}")


def _dp_lines(s: NewStack) -> list[str]:
    e = s.engine
    if e.dp == 1:
        return []
    why = ("as asked (--dp)" if "dp" in s.asked else
           "the model fits one engine with room, so independent copies serve more requests at once, "
           "with no all-reduce between GPUs on every layer (over PCIe on cards without NVLink)")
    return [*comment_lines(f"Engines, each a whole copy of the model on {e.tp} GPU(s) with its own KV cache: {why}. "
                     f"For the longest requests instead: tensorParallelSize {e.tp * e.dp}, dataParallelSize 1."),
            f"    dataParallelSize: {scalar(e.dp)}"]


def _dtype_comment(s: NewStack) -> list[str]:
    cc = f"{s.gpu.compute_capability[0]}.{s.gpu.compute_capability[1]}"
    if s.engine.dtype == "half":
        why = f"{s.gpu.name} (CC {cc}) has no bfloat16 kernels, so the model runs in float16"
    elif s.engine.dtype == "float32":
        why = (f"{s.gpu.name} (CC {cc}) has no bfloat16 and vLLM refuses {s.model.model_type} in "
               "float16: float32, at twice the memory")
    else:
        why = f"{s.gpu.name} (CC {cc}) computes in {s.engine.dtype}, the checkpoint's own precision"
    return comment_lines(f"Compute dtype: {why}.")


def _context_comments(s: NewStack) -> list[str]:
    e = s.engine
    cache = "each engine's KV cache" if e.dp > 1 else "the KV cache"
    if "max_model_len" in s.asked:
        why = f"as asked (--max-model-len); {cache} holds {e.concurrency:.1f} such request(s)."
    elif e.limited_by == "model":
        why = f"the model's own limit (max_position_embeddings); {cache} holds {e.concurrency:.1f} such requests."
    else:
        why = (f"the KV cache's limit, rounded down to whole K (the model allows "
               f"{s.model.max_position_embeddings}); {cache} holds {e.concurrency:.1f} such request(s).")
    return comment_lines(f"Longest request in tokens, prompt plus output: {why} Lower it for more concurrent "
                   "requests: vllm-stack capacity shows the trade-off. (init refuses GPUs that cannot hold "
                   f"a {MIN_USEFUL_CONTEXT}-token request.)")


def _parser_lines(s: NewStack) -> list[str]:
    e = s.engine
    lines: list[str] = []
    if e.reasoning_parser:
        fields = " (and the deprecated ".join(f"message.{f}" for f in reasoning_fields(parse_vllm_version(s.tag)))
        fields += ")" * fields.count("(")
        lines += [*comment_lines(f"Returns the model's thinking apart from the answer, in {fields} with {s.tag}."),
                  f"    reasoningParser: {scalar(e.reasoning_parser)}"]
    if e.tool_call_parser:
        lines += ["    # Tool calls: the model decides when to call one, parsed from its own markup.",
                  "    enableAutoToolChoice: true",
                  f"    toolCallParser: {scalar(e.tool_call_parser)}"]
    if not lines:
        lines = comment_lines(f"No reasoning or tool-call parser is known for model type {s.model.model_type}: "
                              "add reasoningParser / toolCallParser (with enableAutoToolChoice) if the model "
                              "emits them.")
    return lines


def _engine_lines(s: NewStack) -> list[str]:
    e = s.engine
    return [
        f"  {PROJECT}:engine:",
        *_tp_comment(s),
        f"    tensorParallelSize: {scalar(e.tp)}",
        *_dp_lines(s),
        *_dtype_comment(s),
        f"    dtype: {scalar(e.dtype)}",
        *comment_lines("Share of each GPU's memory vLLM may take, set here so maxModelLen below is sized with it."),
        f"    gpuMemoryUtilization: {scalar(e.gpu_memory_utilization)}",
        *_context_comments(s),
        f"    maxModelLen: {scalar(e.max_model_len)}",
        *_parser_lines(s),
    ]


def _device_lines(s: NewStack) -> list[str]:
    """Docker hands the container all the host's GPUs unless deviceIds names some."""
    used = s.engine.tp * s.engine.dp
    if s.target != "docker" or used >= s.count:
        return []
    return [
        *comment_lines(f"The container gets GPUs 0-{used - 1}; the other {s.count - used} stay free "
                 "(TP must split the heads evenly)."),
        f"    deviceIds: {scalar(list(range(used)))}",
    ]


def _docker_lines(s: NewStack) -> list[str]:
    return [
        f"  {PROJECT}:container:",
        "    # Fixed name: a replacement deletes the old container first.",
        f"    name: {scalar(container_name(s.name))}",
        "    # NCCL shares tensors between the GPUs through the host's shared memory.",
        "    ipcMode: host",
        f"  {PROJECT}:network:",
        "    # The API answers on this host only. To publish it, set an API key first",
        "    # (pulumi config set --secret apiKey), then bindAddress: 0.0.0.0.",
        "    bindAddress: 127.0.0.1",
        f"    hostPort: {scalar(VLLM_PORT)}",
    ]


def _kubernetes_lines(s: NewStack) -> list[str]:
    return [
        f"  {PROJECT}:container:",
        "    # The Deployment's and Service's name.",
        f"    name: {scalar(container_name(s.name))}",
        f"  {PROJECT}:kubernetes:",
        *comment_lines("The pod requests tensorParallelSize x dataParallelSize GPUs on a node labelled "
                       f"nvidia.com/gpu.product={s.gpu.product_label}; the Service stays inside the cluster."),
        "    namespace: vllm",
        "    createNamespace: true",
    ]


def stack_text(s: NewStack) -> str:
    """The whole stack file."""
    target = (["    # A Docker host: this machine's socket. From a workstation instead:",
               "    # dockerHost: ssh://deploy@gpu-host"] if s.target == "docker"
              else ["    # The cluster of the current kubeconfig context (pulumi config set kubernetes:context NAME)."])
    hardware = [
        f"  {PROJECT}:hardware:",
        *comment_lines(f"The GPU model (vllm-stack gpus lists them): {s.gpu.memory_gib:.0f} GiB, compute "
                       f"capability {s.gpu.compute_capability[0]}.{s.gpu.compute_capability[1]}."),
        f"    gpu: {scalar(s.gpu.name)}",
        "    # GPUs the host has" + (" (per node)." if s.target == "kubernetes" else "."),
        f"    count: {scalar(s.count)}",
        *_device_lines(s),
    ]
    lines = [
        comment(f"Stack {s.name}, written by: {s.command}"),
        comment(f"Check it: vllm-stack check {s.name}; see what it deploys: vllm-stack plan {s.name};"),
        comment(f"deploy it: pulumi stack select {s.name} --create && pulumi up -s {s.name}."),
        "# Every key is documented in vllm_serving/settings/ (one module per section).",
        "config:",
        f"  {PROJECT}:target:",
        *target,
        f"    kind: {scalar(s.target)}",
        *hardware,
        *_image_lines(s),
        *_model_lines(s),
        *_engine_lines(s),
        *(_docker_lines(s) if s.target == "docker" else _kubernetes_lines(s)),
    ]
    return "\n".join(lines) + "\n"
