"""The weights one GPU holds after vLLM loads a checkpoint: "Model loading took X GiB".

Each tensor kind is split as vLLM's layers split it (model_executor/layers/):
- `VocabParallelEmbedding` / `ParallelLMHead` (vocab_parallel_embedding.py): the vocabulary
  padded to a multiple of 64 per rank, one slice per rank; embeddings on the first pipeline
  stage, the head on the last (one tensor when tied);
- `QKVParallelLinear` (linear.py): query heads split; KV heads split while TP <= KV heads, then
  each rank keeps a whole head (`num_kv_head_replicas`), so the K and V weights are duplicated;
- column/row parallel linears, fused MoE experts and the vision tower (mm_encoder_tp_mode
  "weights", the default) split by TP; `ReplicatedLinear` (routers, MLA's latent projections)
  and norms whole on every rank;
- the rotary embedding's cos/sin cache (rotary_embedding/base.py `cos_sin_cache`, one per
  configuration): max_position_embeddings x rotary dim in the compute dtype, four times the
  positions for M-RoPE (rotary_embedding/mrope.py `cache_max_position_num`);
- a 16-bit checkpoint loads in the compute dtype (float32 doubles it); `--quantization fp8` on a
  16-bit checkpoint stores the projections in one byte (fp8.py, online); the vision tower is not
  loaded with `--language-model-only` (config/multimodal.py, v0.13 on).
Layers split across pipeline stages; the figure is the fullest stage's.
"""

from __future__ import annotations

import math

import msgspec

from vllm_serving.catalog.checkpoint import CheckpointBytes, TensorKind, checkpoint_bytes, method_of
from vllm_serving.catalog.models import ModelArchitecture

GIB = 2**30
VOCAB_PADDING = 64  # vocab_parallel_embedding.py DEFAULT_VOCAB_PADDING_SIZE
MROPE_POSITIONS = 4  # rotary_embedding/mrope.py: max_position_embeddings * 4, for video inputs
SPLIT_BY_TP: tuple[TensorKind, ...] = ("attention_qo", "mlp", "experts", "shared_expert", "linear_attention_proj",
                                       "linear_attention_small")
WHOLE_ON_EVERY_RANK: tuple[TensorKind, ...] = ("attention_replicated", "router", "norm")
QUANTIZABLE_ONLINE: tuple[TensorKind, ...] = ("attention_qo", "attention_kv", "mlp", "experts", "shared_expert",
                                              "linear_attention_proj")


class GpuWeights(msgspec.Struct, frozen=True):
    per_gpu_gib: float
    """The fullest GPU's weights (the first or last pipeline stage)."""
    checkpoint_gib: float
    """The whole checkpoint as loaded (all GPUs' shares, replicas counted once)."""


def _vocab_rows_per_rank(vocab: int, tp: int) -> int:
    """vocab_parallel_embedding.py VocabParallelEmbedding: the vocabulary padded to 64 rows
    (`pad_vocab_size`), then split evenly (`divide(num_embeddings_padded, tp_size)`)."""
    padded = math.ceil(vocab / VOCAB_PADDING) * VOCAB_PADDING
    return math.ceil(padded / tp)


def _round_up(value: float, step: int) -> float:
    return math.ceil(value / step) * step


def expert_padding(model: ModelArchitecture, tp: int, capability: tuple[int, int]) -> float:
    """How much the kernel's padding grows each rank's experts (MXFP4: weight_packing.json)."""
    method = method_of(model.quantization)
    experts = model.experts
    if method is None or experts is None or "expert_padding" not in method:
        return 1.0
    rule = next(r for r in method["expert_padding"] if capability >= tuple(r["min_cc"]))
    width = (experts.intermediate_size or model.intermediate_size or 1) / tp
    hidden = model.hidden_size
    return (_round_up(width, rule["intermediate"]) * _round_up(hidden, rule["hidden"])) / (width * hidden)


def _scaled(ckpt: CheckpointBytes, model: ModelArchitecture) -> CheckpointBytes:
    """A stated total (an inline `weightsGib`) keeps the split of the kinds but its own size."""
    if model.weights_gib is None or not ckpt.loaded_total():
        return ckpt
    factor = model.weights_gib * GIB / ckpt.loaded_total()
    return msgspec.structs.replace(ckpt, by_kind={kind: size * factor for kind, size in ckpt.by_kind.items()})


def weights_per_gpu(model: ModelArchitecture, *, tp: int = 1, pp: int = 1, compute_bytes: int = 2,
                    online_fp8: bool = False, language_model_only: bool = False,
                    capability: tuple[int, int] = (8, 0), checkpoint: CheckpointBytes | None = None) -> GpuWeights:
    """One GPU's share of the checkpoint (per tensor kind, see the module doc)."""
    ckpt = checkpoint or _scaled(checkpoint_bytes(model), model)
    stored = 4 if model.weights_dtype == "float32" else 2
    scale = compute_bytes / stored if model.quantization is None else 1.0

    def size(kind: TensorKind) -> float:
        loaded = ckpt.get(kind) * scale
        if online_fp8 and model.quantization is None and kind in QUANTIZABLE_ONLINE:
            loaded = ckpt.get(kind) / stored
        return loaded

    kv_share = max(1 / tp, 1 / model.num_key_value_heads)
    padding = expert_padding(model, tp, capability) - 1
    layers = (sum(size(kind) for kind in SPLIT_BY_TP) / tp + size("experts") * padding / tp
              + size("attention_kv") * kv_share
              + sum(size(kind) for kind in WHOLE_ON_EVERY_RANK))
    vocab_share = _vocab_rows_per_rank(model.vocab_size, tp) / model.vocab_size
    embedding = size("embedding") * vocab_share
    head = size("lm_head") * vocab_share
    vision = 0.0 if language_model_only else size("vision") / tp
    positions = model.max_position_embeddings * (MROPE_POSITIONS if model.multimodal_rope else 1)
    rotary = positions * model.head_dim * model.partial_rotary_factor * compute_bytes
    if model.mla is not None:
        rotary = model.max_position_embeddings * model.mla.qk_rope_head_dim * compute_bytes
    if pp == 1:
        per_gpu = layers + embedding + head + vision + rotary
    else:  # the first stage holds the embedding (and vision), the last the head; tied: both
        first = embedding + vision + (head if model.tie_word_embeddings else 0.0)
        last = head if not model.tie_word_embeddings else embedding
        per_gpu = layers / pp + max(first, last) + rotary
    total = ckpt.loaded_total() * scale - (size("vision") if language_model_only else 0.0)
    return GpuWeights(per_gpu / GIB, total / GIB)
