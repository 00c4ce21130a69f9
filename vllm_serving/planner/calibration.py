"""A stack's plan beside what a start-up log printed, term by term, and the log as a corpus case.

`vllm-stack calibrate` prints `compare`'s rows; `--write-case` writes `corpus_case` (the format
of tests/fixtures/startup_logs, read back by `startup_case.case_inputs`), so a user's own start
joins the evidence the error band is measured on.
"""

from __future__ import annotations

from typing import Any

import msgspec

from vllm_serving.catalog.models import CATALOG
from vllm_serving.planner.capacity import CapacityInputs, CapacityPlan, plan, spec_inputs
from vllm_serving.planner.compute_dtype import DTYPE_BYTES
from vllm_serving.planner.memory_budget import model_shape, profiled_vision
from vllm_serving.planner.startup_log import LoggedStartup
from vllm_serving.spec import ServingSpec


class Row(msgspec.Struct, frozen=True):
    term: str
    predicted: float | None
    logged: float | None
    unit: str
    note: str = ""

    @property
    def error(self) -> float | None:
        """(predicted - logged) / logged; positive: the plan promised more than vLLM found."""
        if self.predicted is None or not self.logged:
            return None
        return (self.predicted - self.logged) / abs(self.logged)


def logged_inputs(inputs: CapacityInputs, logged: LoggedStartup) -> CapacityInputs:
    """The stack's inputs, but for what the log shows ran: its release, eagerness and batch."""
    update: dict[str, Any] = {}
    if logged.version:
        update["vllm_version"] = tuple(int(p) for p in logged.version.split(".")[:3] if p.isdigit())
        update["vllm_version_source"] = f"the log's v{logged.version}"
    if logged.enforce_eager:
        update["enforce_eager"] = True
    if logged.compile_cache_warm:
        update["compile_cache_warm"] = True
    if logged.max_num_batched_tokens and inputs.max_num_batched_tokens is None:
        update["max_num_batched_tokens"] = logged.max_num_batched_tokens
    return inputs.model_copy(update=update)


def _encoder_rows(predicted: CapacityPlan, logged: LoggedStartup) -> list[Row]:
    """The multimodal encoder's dummy batch beside the log's "Encoder cache will be initialized"
    line, and its memory (no log line states it: it is inside the activation peak)."""
    encoder = predicted.encoder
    if encoder is None and logged.encoder_budget is None:
        return []
    said = f"the log: {logged.encoder_items} {logged.encoder_modality}" if logged.encoder_modality else "no log line"
    planned = f"{encoder.items} {encoder.modality} of {encoder.tokens_per_item:,} tokens" if encoder else "none planned"
    figures = (encoder.encoder_budget, encoder.items, encoder.forward_gib, encoder.kept_gib) if encoder else (None,) * 4
    return [
        Row("encoder budget", figures[0], logged.encoder_budget, "tokens",
            "'Encoder cache will be initialized with a budget of'"),
        Row("encoder items", figures[1], logged.encoder_items, "items", f"{planned} ({said})"),
        Row("encoder forward peak", figures[2], None, "GiB",
            "pixel values and the largest stage; within the activation peak"),
        Row("encoder kept", figures[3], None, "GiB", "outputs (and pixels) held under the language model's run"),
    ]


def compare(predicted: CapacityPlan, logged: LoggedStartup) -> list[Row]:
    """Each term the plan estimates beside the log's figure (None where the log printed none);
    a vision-language model's encoder pass too."""
    weights = predicted.weights_gib_per_gpu + predicted.draft_weights_gib_per_gpu
    rest = None if logged.weights_gib is None else predicted.available_kv_gib + weights - logged.weights_gib
    return [
        Row("CUDA total", predicted.gpu_total_gib, logged.gpu_total_gib, "GiB", "what the utilization multiplies"),
        Row("weights", weights, logged.weights_gib, "GiB", "'Model loading took'"),
        Row("activation peak", predicted.activation_gib, logged.activation_gib, "GiB", "the profiling run"),
        *_encoder_rows(predicted, logged),
        Row("non-torch", predicted.non_torch_gib, logged.non_torch_gib, "GiB"),
        Row("CUDA graphs (estimate)", predicted.cudagraph_estimate_gib, logged.cudagraph_estimate_gib, "GiB",
            "'Estimated CUDA graph memory'"),
        Row("CUDA graphs (captured)", predicted.cudagraph_estimate_gib, logged.cudagraph_gib, "GiB",
            "'Graph capturing finished'"),
        Row("available KV", predicted.available_kv_gib, logged.available_kv_gib, "GiB",
            "'Available KV cache memory'"),
        Row("available KV, logged weights", rest, logged.available_kv_gib, "GiB", "every other term alone"),
        Row("KV tokens", float(predicted.vllm_logged_kv_tokens), logged.kv_tokens, "tokens",
            "'GPU KV cache size'"),
        Row("concurrency", predicted.max_concurrency, logged.max_concurrency, "requests",
            f"at {predicted.max_model_len:,} tokens" + (
                f" (the log: {logged.concurrency_tokens:,})"
                if logged.concurrency_tokens and logged.concurrency_tokens != predicted.max_model_len else "")),
    ]


def _shape_facts(spec: ServingSpec, predicted: CapacityPlan) -> dict[str, Any]:
    shape = model_shape(spec.model, DTYPE_BYTES[predicted.dtype])
    facts: dict[str, Any] = {
        "hidden_size": shape.hidden_size, "intermediate_size": shape.intermediate_size,
        "vocab_size": shape.vocab_size, "num_layers": shape.num_layers,
        "num_attention_heads": shape.num_attention_heads, "num_key_value_heads": shape.num_key_value_heads,
        "head_dim": shape.head_dim, "dtype_bytes": shape.dtype_bytes}
    if shape.linear_attention_layers:
        facts["linear_attention_layers"] = shape.linear_attention_layers
    if shape.experts_per_token:
        facts |= {"experts_per_token": shape.experts_per_token,
                  "expert_intermediate_size": shape.expert_intermediate_size}
    return facts


def _multimodal_facts(spec: ServingSpec) -> dict[str, Any]:
    """The encoder the plan profiled (the catalog's, with a --mm-processor-kwargs image limit)
    and the flags that shape its dummy batch, as a corpus case states them."""
    inputs = spec_inputs(spec)
    vision = profiled_vision(inputs.model, inputs.language_model_only, inputs.mm_image_max_pixels)
    if vision is None:
        return {}
    facts: dict[str, Any] = {"vision": vision.model_dump(mode="json", exclude_none=True)}
    if inputs.mm_limits:
        facts["limit_mm_per_prompt"] = dict(inputs.mm_limits)
    if inputs.mm_encoder_data_parallel:
        facts["mm_encoder_tp_mode"] = "data"
    return facts


def corpus_case(spec: ServingSpec, predicted: CapacityPlan, logged: LoggedStartup, *, case_id: str,
                source_url: str) -> dict[str, Any]:
    """The start-up as a case of tests/fixtures/startup_logs (README there): the log's figures,
    the stack's model and flags, every assumption the log does not settle said as one."""
    engine, name = spec.settings.engine, spec.settings.model.name
    assumptions = ["engine flags, GPU and model are the stack's (vllm-stack calibrate); check them against the "
                   "log's 'non-default args' line"]
    if logged.gpu_total_gib is None:
        assumptions.append(f"the GPU's CUDA total is the catalog's {predicted.gpu_total_gib:.2f} GiB, not printed "
                           "in the log")
    model: dict[str, Any] = {"name": name or spec.model.architecture, "architecture": spec.model.architecture,
                             "params_billion": spec.model.params_billion}
    if name in CATALOG:
        model |= {"catalog": name, "config_url": CATALOG[name].source}
    multimodal = _multimodal_facts(spec) if predicted.encoder is not None else {}
    if multimodal:
        model["vision"] = multimodal.pop("vision")
    return {
        "id": case_id, "source_url": source_url, "vllm_version": logged.version or predicted.vllm_version,
        "version_evidence": "the log's banner or engine line" if logged.version else "the stack's image tag",
        "scope": "in", "scope_reason": f"written by vllm-stack calibrate from stack {spec.stack}",
        "gpu": {"name": spec.gpu.product_label or spec.gpu.name,
                "total_gib": logged.gpu_total_gib or round(predicted.gpu_total_gib, 2),
                "total_evidence": "the log's 'Free memory on device' line" if logged.gpu_total_gib
                else "vllm_serving/catalog/gpus.py", "count": predicted.tp * predicted.pp},
        "model": model | _shape_facts(spec, predicted),
        "engine": {"usage_context": "openai", "tp": predicted.tp, "pp": predicted.pp,
                   "gpu_memory_utilization": engine.gpu_memory_utilization,
                   "max_model_len": logged.concurrency_tokens or predicted.max_model_len,
                   "max_num_batched_tokens": logged.max_num_batched_tokens or engine.max_num_batched_tokens,
                   "max_num_seqs": engine.max_num_seqs, "enforce_eager": predicted.cudagraph_mode == "none",
                   "sampler": logged.sampler, "flashinfer_installed": logged.flashinfer_installed,
                   "compile_cache": "warm" if logged.compile_cache_warm else "cold",
                   **({"model_runner": logged.model_runner} if logged.model_runner else {}), **multimodal},
        "logged": {"weights_gib": logged.weights_gib, "available_kv_gib": logged.available_kv_gib,
                   "kv_tokens": logged.kv_tokens, "max_concurrency": logged.max_concurrency,
                   "cudagraph_gib": logged.cudagraph_gib,
                   **{key: value for key, value in (("cudagraph_estimate_gib", logged.cudagraph_estimate_gib),
                                                    ("activation_gib", logged.activation_gib),
                                                    ("non_torch_gib", logged.non_torch_gib),
                                                    ("encoder_budget", logged.encoder_budget),
                                                    ("encoder_items", logged.encoder_items),
                                                    ("encoder_modality", logged.encoder_modality))
                      if value is not None}},
        "assumptions": assumptions,
        "log_lines": "\n".join(logged.lines) + "\n",
    }


def predicted_for_log(inputs: CapacityInputs, logged: LoggedStartup) -> CapacityPlan:
    return plan(logged_inputs(inputs, logged))
