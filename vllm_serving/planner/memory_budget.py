"""The planner's side of the memory estimate: a stack's model, GPU, release and flags as the
inputs of `available_memory.estimate_available_memory`.

- the release: the image tag as the release registry names it (`engine/release_registry.py`),
  else the version the tag spells, else the project's pinned release;
- the shape: the catalog's architecture (`intermediate_size` derived when a dense entry lacks
  it; a mixture of experts' expert width, `experts.intermediate_size`, derived likewise);
- the compile mode: `--enforce-eager`, `-O<level>` / `--optimization-level` and
  `--compilation-config` `cudagraph_mode` in `engine.extraArgs`, matched as the release parses them;
- the hybrid KV cache manager: `--[no-]disable-hybrid-kv-cache-manager`, `--kv-transfer-config`
  and `--kv-events-config` in `engine.extraArgs` (config/vllm.py `VllmConfig.__post_init__`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import msgspec

from vllm_serving.catalog.checkpoint import (
    checkpoint_bytes,
    derived_expert_intermediate_size,
    derived_intermediate_size,
    element_counts,
)
from vllm_serving.catalog.models import ModelArchitecture
from vllm_serving.catalog.vision import VisionEncoder
from vllm_serving.engine.release_registry import VllmRelease, release_for_tag
from vllm_serving.planner.available_memory import CudagraphMode, ModelShape, parse_version

PINNED_VLLM_VERSION = (0, 19, 1)
"""The project's pin (Pulumi.yaml image.tag): the release assumed when a tag names none."""
# config/vllm.py OPTIMIZATION_LEVEL_0x (v0.19.1, v0.20.2): the cudagraph_mode each -O level sets.
OPTIMIZATION_LEVEL_GRAPHS: dict[str, CudagraphMode] = {
    "0": "none", "1": "piecewise", "2": "full_and_piecewise", "3": "full_and_piecewise",
}
# config/compilation.py CUDAGraphMode -> the graphs the estimate counts (FULL alone is counted
# as FULL_AND_PIECEWISE: the same captures, bounded by max_num_seqs).
CUDAGRAPH_MODES: dict[str, CudagraphMode] = {
    "NONE": "none", "PIECEWISE": "piecewise", "FULL": "full_and_piecewise",
    "FULL_DECODE_ONLY": "full_and_piecewise", "FULL_AND_PIECEWISE": "full_and_piecewise",
}
# Widest MLP the derivation accepts, in hidden sizes (Qwen2-7B's 18944 / 3584 = 5.3).
ESTIMATE_CUDAGRAPHS_ENV = "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"


class MultimodalFlags(msgspec.Struct, frozen=True):
    limits: Mapping[str, int] = msgspec.field(default_factory=dict)
    skip_profiling: bool = False
    encoder_data_parallel: bool = False
    image_max_pixels: int | None = None
    """`--mm-processor-kwargs` max_pixels: overrides the processor's image limit."""


def version_for_tag(tag: str | None, pinned: tuple[int, ...] = PINNED_VLLM_VERSION) -> tuple[tuple[int, ...], str]:
    """The vLLM version an image tag runs, and where that came from (for the plan)."""
    release, unknown = release_for_tag(tag)
    if unknown is None:
        version = parse_version(release.version)
        assert version is not None
        return version, f"image tag {tag} (release registry v{release.version})"
    spelled = parse_version(tag) if tag else None
    if spelled is not None:
        return spelled, f"image tag {tag} (no registry file; its version number)"
    why = f"moving tag {tag}" if tag else "no image tag"
    return pinned, f"the project's pinned v{'.'.join(map(str, pinned))} ({why})"


def model_shape(model: ModelArchitecture, compute_bytes: int) -> ModelShape:
    linear = model.linear_attention
    experts = model.experts
    # A mixture of experts' config.json `intermediate_size` (if any) is its dense layers' width;
    # without it there is no dense MLP to derive (the experts are their own term).
    dense = model.intermediate_size or (0 if experts is not None else derived_intermediate_size(model))
    return ModelShape(
        hidden_size=model.hidden_size, intermediate_size=dense,
        vocab_size=model.vocab_size, num_layers=model.num_hidden_layers,
        num_attention_heads=model.num_attention_heads, num_key_value_heads=model.num_key_value_heads,
        head_dim=model.head_dim, dtype_bytes=compute_bytes,
        linear_attention_layers=linear.num_layers if linear is not None else 0,
        experts_per_token=experts.experts_per_token if experts is not None else 0,
        expert_intermediate_size=(experts.intermediate_size if experts is not None and experts.intermediate_size
                                  else derived_expert_intermediate_size(model)),
    )


def draft_weights_gib(model: ModelArchitecture, draft_layers: int, compute_bytes: int, tp: int) -> float:
    """Per-GPU weights of an MTP draft: the checkpoint's MTP tensors (`mtp` kind: its decoder
    layers and the fc joining embedding and hidden state, catalog/checkpoint.py), split by TP.
    It shares the target's embedding and lm_head (v1/spec_decode/eagle.py
    _maybe_share_embeddings/_maybe_share_lm_head)."""
    if not draft_layers:
        return 0.0
    ckpt = checkpoint_bytes(model)
    per_layer = ckpt.get("mtp") / max(1, model.mtp_layers)
    if not per_layer:  # no MTP tensors stated: one average decoder layer and the fc
        element = ckpt.loaded_total() / max(1.0, sum(element_counts(model).values()) - element_counts(model)["mtp"])
        per_layer = (ckpt.loaded_total() - ckpt.get("embedding") - ckpt.get("lm_head") - ckpt.get("vision")) / (
            model.num_hidden_layers) + 2 * model.hidden_size ** 2 * element
    stored = 4 if model.weights_dtype == "float32" else 2
    scale = compute_bytes / stored if model.quantization is None else 1.0
    return draft_layers * per_layer * scale / tp / 2**30


def _values(release: VllmRelease, extra_args: Sequence[str], flag: str) -> list[tuple[str, str]]:
    """(option, value) for each extraArgs item naming `flag`: `--f v`, `--f=v`, `--f.key v`,
    and the attached short form `-O0`."""
    args = (*extra_args, "")
    found = []
    for arg, following in zip(args, args[1:], strict=False):
        match = release.match(arg)
        if match is None or match.flag.name != flag:
            continue
        option, eq, inline = arg.partition("=")
        if not eq and option.startswith("-O") and len(option) > 2 and "." not in option:
            option, inline, eq = "-O", option[2:], "="
        found.append((option, inline if eq else following))
    return found


def _switch(release: VllmRelease, extra_args: Sequence[str], flag: str) -> bool | None:
    value = None
    for arg in extra_args:
        match = release.match(arg)
        if match is not None and match.flag.name == flag:
            value = not match.negated
    return value


def _graph_mode_of_config(option: str, value: str) -> CudagraphMode | None:
    if "." in option:  # --compilation-config.cudagraph_mode PIECEWISE
        return CUDAGRAPH_MODES.get(value.upper()) if option.endswith("cudagraph_mode") else None
    try:
        config = json.loads(value)
    except json.JSONDecodeError:
        return None
    mode = config.get("cudagraph_mode") if isinstance(config, dict) else None
    return CUDAGRAPH_MODES.get(str(mode).upper()) if mode is not None else None


def compile_flags(tag: str | None, extra_args: Sequence[str]) -> tuple[bool, CudagraphMode | None]:
    """(enforce_eager, cudagraph_mode) that extraArgs set, matched as the image's release parses
    them (the newest known release for an unknown tag); the last occurrence wins."""
    if not extra_args:
        return False, None
    release, _ = release_for_tag(tag)
    eager = bool(_switch(release, extra_args, "--enforce-eager"))
    mode: CudagraphMode | None = None
    if release.flag("--optimization-level") is not None:  # v0.19+: -O is the optimization level
        for _, level in _values(release, extra_args, "--optimization-level"):
            mode = OPTIMIZATION_LEVEL_GRAPHS.get(level, mode)
    for option, value in _values(release, extra_args, "--compilation-config"):
        mode = _graph_mode_of_config(option, value) or mode
    return eager, mode


def hybrid_kv_cache_manager(tag: str | None, extra_args: Sequence[str]) -> bool:
    """Whether vLLM's hybrid KV cache manager runs (config/vllm.py VllmConfig.__post_init__):
    on by default; off with --disable-hybrid-kv-cache-manager, with --kv-events-config, or with
    --kv-transfer-config unless --no-disable-hybrid-kv-cache-manager keeps it."""
    if not extra_args:
        return True
    release, _ = release_for_tag(tag)
    disabled = _switch(release, extra_args, "--disable-hybrid-kv-cache-manager")
    if disabled is not None:
        return not disabled
    # Explicitly kept on, KV events make vLLM refuse to start; unset, they and a connector turn it off.
    return not any(_values(release, extra_args, flag) for flag in ("--kv-events-config", "--kv-transfer-config"))


def language_model_only(tag: str | None, extra_args: Sequence[str]) -> bool:
    """`--language-model-only` (config/multimodal.py MultiModalConfig, v0.17 on): every modality
    limit 0, so the model's vision tower is not built (models/interfaces.py _mark_tower_model)."""
    if not extra_args:
        return False
    release, _ = release_for_tag(tag)
    return bool(_switch(release, extra_args, "--language-model-only"))


def estimate_cudagraphs_env(env: Mapping[str, str]) -> bool | None:
    """VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS from engine.env (envs.py reads int(value))."""
    value = env.get(ESTIMATE_CUDAGRAPHS_ENV)
    if value is None or not value.strip().lstrip("-").isdigit():
        return None
    return bool(int(value))


def _json_object(value: str) -> dict[str, object]:
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def multimodal_flags(tag: str | None, extra_args: Sequence[str]) -> MultimodalFlags:
    """The flags that shape the encoder's profiling pass (config/multimodal.py MultiModalConfig):
    `--limit-mm-per-prompt` (a count, or `{"count": n, ...}` per modality; `--limit-mm-per-prompt.video 0`),
    `--skip-mm-profiling`, `--mm-encoder-tp-mode data`, and a `max_pixels` / `size.longest_edge`
    in `--mm-processor-kwargs` (the Qwen processors' image limit)."""
    if not extra_args:
        return MultimodalFlags()
    release, _ = release_for_tag(tag)
    limits: dict[str, int] = {}
    for option, value in _values(release, extra_args, "--limit-mm-per-prompt"):
        items: dict[str, object] = {option.split(".", 1)[1]: value} if "." in option else _json_object(value)
        for modality, limit in items.items():
            count = limit.get("count") if isinstance(limit, dict) else limit
            if isinstance(count, int | str) and str(count).strip().isdigit():
                limits[modality] = int(count)
    max_pixels = None
    for _, value in _values(release, extra_args, "--mm-processor-kwargs"):
        kwargs = _json_object(value)
        size = kwargs.get("size")
        edge = size.get("longest_edge") if isinstance(size, dict) else None
        for candidate in (kwargs.get("max_pixels"), edge):
            if isinstance(candidate, int) and candidate > 0:
                max_pixels = candidate
    modes = [value for _, value in _values(release, extra_args, "--mm-encoder-tp-mode")]
    return MultimodalFlags(limits=limits, skip_profiling=bool(_switch(release, extra_args, "--skip-mm-profiling")),
                           encoder_data_parallel=bool(modes) and modes[-1] == "data", image_max_pixels=max_pixels)


def profiled_vision(model: ModelArchitecture, language_model_only: bool,
                    image_max_pixels: int | None = None) -> VisionEncoder | None:
    """The encoder vLLM profiles: none with `--language-model-only`; the Qwen processors' image
    limit as `--mm-processor-kwargs` sets it."""
    vision = model.vision
    if vision is None or language_model_only:
        return None
    if image_max_pixels is not None and vision.family != "fixed_resolution":
        return vision.model_copy(update={"image_max_pixels": image_max_pixels})
    return vision
