"""The multimodal encoder's share of the torch peak vLLM measures in its profiling run.

`profile_run` (v1/worker/gpu_model_runner.py) encodes the dummy batch (`mm_dummy_batch`) before
the language model's dummy run, so torch's `allocated_bytes.all.peak` is the larger of:

- the encoder's forward: the batch's pixel values plus what one encoder stage holds at once
  (`_stage_elements`, read from the v0.19.1 code: qwen2_5_vl.py `Qwen2_5_VisionAttention`,
  qwen3_vl.py `Qwen3_VisionTransformer`, clip.py / siglip.py encoder layers);
- what stays alive while the language model's dummy run and the sampler run: the encoder's
  outputs (kept in `encoder_cache`), the pixel values (the v1 runner's local
  `batched_dummy_mm_inputs`; the v2 runner, v1/worker/gpu/mm/encoder_runner.py, frees them),
  and in v0.11 / v0.12 every output copied into zeros of `encoder_budget` /
  `max_tokens_per_item` rows (memory_accounting.json `mm_encoder_cache`) - with the original
  outputs still referenced by the loop variable `output`.

Attention runs over each image or frame with FlashAttention's varlen kernel, xformers or torch's
SDPA without a mask (flash or memory-efficient kernels): no attention matrix is materialised.
Not modelled: cuDNN workspaces of the patch convolution, allocator rounding, FlashAttention's
log-sum-exp rows (4 bytes per head and patch).
"""

from __future__ import annotations

import math
from typing import Literal

import msgspec

from vllm_serving.catalog.vision import VisionEncoder
from vllm_serving.planner.mm_dummy_batch import DummyBatch
from vllm_serving.planner.release_accounting import ReleaseAccounting

Runner = Literal["v1", "v2"]
ROTARY_BYTES = 4
"""The Qwen encoders' rotary cos/sin tables are float32, head_dim / 2 each per patch."""


class EncoderProfile(msgspec.Struct, frozen=True):
    batch: DummyBatch
    forward_bytes: int
    """Torch bytes while the encoder runs: the pixel values and its largest stage."""
    kept_bytes: int
    """Torch bytes still allocated while the language model's dummy run and the sampler run."""
    detail: str


def _block_elements(vision: VisionEncoder, tp: int, native_norm: bool) -> float:
    """Elements per patch one encoder block holds at its peak, its input included (the caller's
    loop variable keeps it alive through the block).

    Attention (qwen2_5_vl.py `Qwen2_5_VisionAttention.forward`, the Qwen2/3 encoders' too): the
    input and its normed copy, then qkv 3h/tp, the q|k half made contiguous 2h/tp, rotated 2h/tp,
    the context h/tp and its contiguous copy h/tp; then the projection's h (a new tensor again
    after TP's all-reduce) while all but the first context are alive. CLIP/SigLIP (clip.py
    `CLIPAttention`): qkv 3h/tp, the context h/tp and its reshaped copy h/tp, then out_proj.
    MLP, where `x = x + mlp(norm2(x))` (Qwen2/3-VL, CLIP, SigLIP): the input, the attention's sum
    and its normed copy, fc1 and its activation, then fc2 with the activation alive (fc1's output
    was only an argument). Qwen2.5-VL (`Qwen2_5_VisionBlock.forward`) adds the attention output
    with `norm2(x, residual=x_attn)`: in place with vLLM's CUDA kernel (eager: custom ops on), two
    new tensors with the native RMSNorm a compiled model uses (custom ops off); its SwiGLU keeps
    gate_up 2I/tp while the activation I/tp and the down projection's h exist."""
    h, inner = vision.hidden_size, vision.intermediate_size / tp
    reduced = h if tp > 1 else 0
    if vision.family == "fixed_resolution":
        attention = 2 * h + max(5 * h / tp, h + 4 * h / tp + reduced)
    else:
        attention = 2 * h + max(9 * h / tp, h + 8 * h / tp + reduced)
    if vision.gated_mlp:
        mlp = (4 if native_norm else 2) * h + 3 * inner + h + reduced
    else:
        mlp = 3 * h + max(2 * inner, inner + h + reduced)
    return max(attention, mlp)


def _forward_bytes(vision: VisionEncoder, batch: DummyBatch, items: int, tp: int, dtype_bytes: int,
                   native_norm: bool) -> tuple[int, str]:
    """The largest stage of the encoder's forward over `items` items, pixel values excluded.

    Qwen3-VL also keeps the interpolated position embeddings (h per patch, `pos_embeds`) through
    the blocks, and the deepstack features already merged; its `fast_pos_embed_interpolate`
    first holds the patch embeddings, each item's interpolated embeddings and their concatenation
    (3h per patch in all) and the last item's four corner embeddings (4h per patch of a frame).
    The final merger stage holds the residual stream, its normed copy, the merger's widened
    input (h per patch over tp, twice) and the outputs twice (the merger's and deepstack's, then
    their concatenation)."""
    item = batch.item
    patches = items * item.patches
    tokens = items * item.embeds
    h = vision.hidden_size
    qwen3 = vision.family == "qwen3_vl"
    positions = h if qwen3 else 0
    deepstack = vision.deepstack_layers * vision.out_hidden_size * tokens
    blocks = patches * (positions + _block_elements(vision, tp, native_norm)) + deepstack
    merge = patches * (positions + 2 * h + 2 * h / tp) + 2 * tokens * vision.output_width
    stages = {"blocks": blocks, "merger": merge}
    if qwen3:
        per_frame = item.patches // item.frames
        stages["position interpolation"] = (3 * patches + (5 if item.frames > 1 else 4) * per_frame) * h
    stage = max(stages, key=lambda name: stages[name])
    rotary = patches * vision.head_dim * ROTARY_BYTES if vision.family != "fixed_resolution" else 0
    return int(stages[stage] * dtype_bytes + rotary), stage


def encoder_profile(release: ReleaseAccounting, vision: VisionEncoder, batch: DummyBatch, *, tp: int,
                    dtype_bytes: int, runner: Runner, data_parallel: bool = False,
                    compiled: bool = True) -> EncoderProfile:
    """The encoder's forward and what it leaves allocated, for one GPU.

    With `--mm-encoder-tp-mode data` each rank encodes its share of the items with the whole
    encoder (models/vision.py `run_dp_sharded_mrope_vision_model`: the busiest rank gets
    ceil(items / tp)) and gathers every output. `compiled`: vLLM compiles the language model
    (not eager), which turns its custom ops off (config/compilation.py `custom_ops`: "none"
    under VLLM_COMPILE) - the encoder then runs the native RMSNorm too."""
    item, items = batch.item, batch.items
    pixels = items * item.pixel_elements * dtype_bytes
    local_items, width = (math.ceil(items / tp), 1) if data_parallel else (items, tp)  # DP: whole layers, own items
    forward, stage = _forward_bytes(vision, batch, local_items, width, dtype_bytes, native_norm=compiled)
    if data_parallel:  # run_dp_sharded_mrope_vision_model concatenates the local items' pixels, at TP 1 too
        forward += local_items * item.pixel_elements * dtype_bytes
    outputs = items * item.embeds * vision.output_width * dtype_bytes
    cache_rule = release.text("mm_encoder_cache")
    rows = {"expanded_to_encoder_budget": batch.encoder_budget,
            "expanded_to_max_tokens_per_item": item.budget_tokens}.get(cache_rule, 0)
    expanded = items * rows * vision.output_width * dtype_bytes if item.embeds < rows else 0
    kept = outputs + expanded + (pixels if runner == "v1" else 0)
    detail = (f"{items} {item.modality} item(s) of {item.embeds} tokens ({item.patches} patches), budget "
              f"{batch.encoder_budget}: encoder peak {(pixels + forward) / 2**30:.2f} GiB ({stage}), "
              f"kept {kept / 2**30:.2f} GiB ({release.text('mm_encoder_cache_source')})")
    return EncoderProfile(batch, pixels + forward, kept, detail)
