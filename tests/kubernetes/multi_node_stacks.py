"""A model that needs two 8-GPU nodes, as a test stack: Llama-3.1-405B in bf16 on 2 x 8 H100.

It is the model of vLLM's own LeaderWorkerSet example (docs/deployment/frameworks/lws.md:
TP 8 x PP 2, two pods of 8 GPUs). Its facts are inline (the catalog has no entry), from the
checkpoint's config.json (meta-llama/Llama-3.1-405B-Instruct): 126 layers, hidden 16384, 128
heads and 8 KV heads of 128, vocabulary 128256, 131072 positions; ~405B parameters, ~754 GiB
in bf16, so one node of 8 x 80 GB cannot hold it and two can.
"""

from __future__ import annotations

from typing import Any

from tests.stack_builders import make_spec, stack_values
from vllm_serving.spec import ServingSpec

LLAMA_405B: dict[str, Any] = {
    "architecture": "LlamaForCausalLM", "modelType": "llama", "family": "llama",
    "paramsBillion": 405.0, "numHiddenLayers": 126, "hiddenSize": 16384, "intermediateSize": 53248,
    "vocabSize": 128256, "maxPositionEmbeddings": 131072, "numAttentionHeads": 128,
    "numKeyValueHeads": 8, "headDim": 128, "fullAttentionLayers": 126,
}

# a100-k8s with the Qwen-specific engine flags cleared (None removes a key)
SECTIONS: dict[str, dict[str, Any]] = {
    "hardware": {"gpu": "H100-80GB", "count": 8},
    "model": {"name": None, "architecture": LLAMA_405B, "volumeName": "llama-3-1-405b",
              "containerPath": "/models/Llama-3.1-405B-Instruct", "servedName": "llama-3.1-405b"},
    "engine": {"tensorParallelSize": 8, "pipelineParallelSize": 2, "maxModelLen": 32768,
               "kvCacheDtype": None, "attentionBackend": None, "reasoningParser": None,
               "toolCallParser": None, "enableAutoToolChoice": None, "speculativeConfig": None,
               "gpuMemoryUtilization": 0.9},
    "kubernetes": {"nodes": 2, "cache": {"accessMode": "ReadWriteMany"}},
}


def _merged(extra: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {name: dict(values) for name, values in SECTIONS.items()}
    for name, values in extra.items():
        out[name] = {**out.get(name, {}), **values}
    return out


def two_node_values(**sections: dict[str, Any]) -> dict[str, Any]:
    """The stack file's values (for the program under mocks)."""
    return stack_values("a100-k8s", **_merged(sections))


def two_node_spec(secrets: tuple[str, ...] = (), **sections: dict[str, Any]) -> ServingSpec:
    """The resolved spec; `sections` are merged over the two-node stack's own."""
    return make_spec("a100-k8s", secrets, **_merged(sections))
