"""The model figures the profiling run's activation peak depends on, and its forward-pass part.

`v1/worker/gpu_model_runner.py` `GPUModelRunner.profile_run` runs one forward pass over
`max_num_batched_tokens`; compiled pieces free their buffers between layers, so the peak is one
layer's: the residual and the normed input, then the larger of the attention projections and
the MLP (memory_accounting.json `model.forward_bytes_per_token`). A mixture of experts' MLP is
the fused-MoE kernel, whose two workspaces are sized per routed token
(`model.moe_workspace`, `moe_workspace_per_token`).
"""

from __future__ import annotations

import msgspec


class ModelShape(msgspec.Struct, frozen=True):
    """The config.json figures the profiling run's peak depends on."""

    hidden_size: int
    intermediate_size: int
    """Dense MLP width (0: no dense MLP layer)."""
    vocab_size: int
    num_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    dtype_bytes: int = 2
    linear_attention_layers: int = 0
    """Gated DeltaNet layers of a hybrid model (their kernels' workspaces: a term of its own)."""
    experts_per_token: int = 0
    """Routed experts per token of a mixture of experts (0: dense MLP layers only)."""
    expert_intermediate_size: int = 0
    """One routed expert's MLP width (config.json `moe_intermediate_size`)."""


def moe_workspace_per_token(shape: ModelShape, tp: int) -> float:
    """Elements of the fused-MoE workspaces per batched token: for each routed copy of the token
    (M x topk rows), the activation or down-projection output (max(I / tp, hidden)) and the
    gate-up output (max(2 I / tp, hidden)), held at once (fused_moe/fused_moe.py
    TritonExperts.workspace_shapes; fused_moe/modular_kernel.py FusedMoEKernel._allocate_buffers)."""
    if not shape.experts_per_token:
        return 0.0
    width, hidden = shape.expert_intermediate_size / tp, shape.hidden_size
    return shape.experts_per_token * (max(width, hidden) + max(2 * width, hidden))


def forward_bytes(shape: ModelShape, tokens: int, tp: int) -> int:
    """One layer's buffers over `tokens`: residual + normed input + the larger of the attention
    projections and the MLP (dense gate-up + activation, or the MoE workspaces)."""
    attention = (2 * shape.num_attention_heads + 2 * shape.num_key_value_heads) * shape.head_dim / tp
    mlp = max(3 * shape.intermediate_size / tp, moe_workspace_per_token(shape, tp))
    return int(tokens * (2 * shape.hidden_size + max(mlp, attention)) * shape.dtype_bytes)
