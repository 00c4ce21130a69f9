"""Which top-k/top-p sampler the profiling run exercises, and the memory it peaks at.

`GPUModelRunner.profile_run` ends with `_dummy_sampler_run` over min(max_num_seqs,
max_num_batched_tokens) rows of the full vocabulary. What runs there is decided by the release,
the image and its environment, not by the release alone:

- FlashInfer's sampler (`v1/sample/ops/topk_topp_sampler.py` `TopKTopPSampler.__init__`): used
  whenever installed in v0.10 (the official image ships it, pip's wheel only as an extra), only
  with `VLLM_USE_FLASHINFER_SAMPLER=1` from v0.11.2, by default from v0.21 (envs.py) on
  compute capability 7.5-12.1 (`FlashInferBackend.supports_compute_capability`);
- otherwise `apply_top_k_top_p`: PyTorch's sort, or from v0.17 the Triton kernel for 8 rows and
  more (`v1/sample/ops/topk_topp_triton.py`, with a cached per-SM fp32 buffer);
- the v2 model runner (`v1/worker/gpu/model_runner.py`, default for a few architectures from
  v0.22 and for all from v0.29; `VLLM_USE_V2_MODEL_RUNNER` overrides) samples its dummy rows
  greedily in the model dtype; from v0.33 a second pass with warm-up parameters pays for the
  fp32 pipeline (`_dummy_sampler_run`).

Bytes per logit of each path are `memory_accounting.json` `model.sampler_bytes_per_logit`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import msgspec

from vllm_serving.planner.release_accounting import ReleaseAccounting, load_accounting

Sampler = Literal["flashinfer", "triton", "torch_sort", "v2_model_dtype", "v2_warmup_flashinfer",
                  "v2_warmup_triton"]
FLASHINFER_ENV = "VLLM_USE_FLASHINFER_SAMPLER"
V2_RUNNER_ENV = "VLLM_USE_V2_MODEL_RUNNER"
TRITON_MIN_ROWS = 8  # apply_top_k_top_p: `logits.shape[0] >= 8`, v0.17 to v0.33
FLASHINFER_CC = ((7, 5), (12, 1))  # FlashInferBackend.supports_compute_capability


class SamplerChoice(msgspec.Struct, frozen=True):
    sampler: Sampler
    why: str
    """What decided it, in words (for the plan's memory detail)."""


def env_flag(env: Mapping[str, str], name: str) -> bool | None:
    """An envs.py boolean: `bool(int(value))`, as `maybe_convert_bool` reads VLLM_USE_V2_MODEL_RUNNER
    too (envs.py, v0.21-v0.34: "true" is no number there); unset or unreadable -> None."""
    value = env.get(name, "").strip()
    return bool(int(value)) if value.lstrip("-").isdigit() else None


class ModelKind(msgspec.Struct, frozen=True):
    """What config/vllm.py _is_default_v2_model_runner_model asks of a model."""

    architecture: str | None = None
    moe: bool = False
    hybrid: bool = False
    quantized: bool = False


def uses_v2_runner(release: ReleaseAccounting, kind: ModelKind, env: Mapping[str, str]) -> bool:
    """config/vllm.py VllmConfig.use_v2_model_runner: the env switch, else the release's default
    (memory_accounting.json `v2_model_runner` and `v2_model_runner_rule`)."""
    listed_or_all = release.raw.get("v2_model_runner", "never")
    if listed_or_all == "never":
        return False
    forced = env_flag(env, V2_RUNNER_ENV)
    if forced is not None:
        return forced
    if listed_or_all == "all":
        return True
    listed = kind.architecture in listed_or_all
    rule = release.text("v2_model_runner_rule")
    if rule == "listed_unquantized_dense":
        return listed and not kind.moe and not kind.quantized
    if rule == "listed":
        return listed
    if rule == "listed_or_dense":
        return not kind.hybrid and (listed or not kind.moe)
    return listed or (not kind.moe and not kind.hybrid)  # listed_or_dense_hybrid_listed


def _flashinfer(release: ReleaseAccounting, env: Mapping[str, str], installed: bool,
                capability: tuple[int, int] | None) -> tuple[bool, str]:
    rule = release.text("flashinfer_sampler")
    asked = env_flag(env, FLASHINFER_ENV)
    supported = capability is None or FLASHINFER_CC[0] <= capability <= FLASHINFER_CC[1]
    if rule == "if_installed":
        if not installed:
            return False, "FlashInfer is not installed in the image"
        return asked is not False, f"FlashInfer is installed{' but ' + FLASHINFER_ENV + '=0' if asked is False else ''}"
    if rule == "opt_in":
        return bool(asked), f"FlashInfer only with {FLASHINFER_ENV}=1 in this release" + (" (set)" if asked else "")
    if asked is False:
        return False, f"{FLASHINFER_ENV}=0"
    if not supported:
        return False, "FlashInfer's sampler does not run on this compute capability"
    return True, f"FlashInfer by default from v0.21 ({FLASHINFER_ENV} unset or 1)"


def sampler_choice(release: ReleaseAccounting, *, rows: int, env: Mapping[str, str], flashinfer_installed: bool,
                   capability: tuple[int, int] | None, kind: ModelKind) -> SamplerChoice:
    """The path `_dummy_sampler_run` takes for this release, image, environment, GPU and model."""
    flashinfer, why = _flashinfer(release, env, flashinfer_installed, capability)
    native = release.text("native_top_k_top_p")
    triton = native == "triton" or (native == "triton_from_8_rows" and rows >= TRITON_MIN_ROWS)
    if uses_v2_runner(release, kind, env):
        if release.raw.get("v2_profile_sampler") != "warmup_params":
            return SamplerChoice("v2_model_dtype", "the v2 model runner samples the dummy rows greedily")
        return SamplerChoice("v2_warmup_flashinfer" if flashinfer else "v2_warmup_triton",
                             f"the v2 model runner's warm-up pass; {why}")
    if flashinfer:
        return SamplerChoice("flashinfer", why)
    if triton:
        return SamplerChoice("triton", f"{why}; Triton top-k/top-p for {TRITON_MIN_ROWS} rows and more")
    below = f" below {TRITON_MIN_ROWS} rows" if native != "torch_sort" else ""
    return SamplerChoice("torch_sort", f"{why}; PyTorch's sort{below}")


def sampler_bytes_per_logit(sampler: Sampler, rows: int) -> int:
    """Bytes per (row x vocab) element at the sampler's peak: the last [first row count, bytes]
    pair of the sampler the run's rows reach (PyTorch's sort allocates by row count)."""
    steps = load_accounting().model["sampler_bytes_per_logit"][sampler]
    return int(max((step for step in steps if rows >= step[0]), key=lambda step: step[0])[1])


def _next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def triton_buffer_bytes(sampler: Sampler, rows: int, vocab: int, sm_count: int | None) -> int:
    """apply_top_k_top_p_triton's cached fp32 buffer: min(next_pow2(min(SMs, rows)), SMs) rows."""
    if sampler not in ("triton", "v2_warmup_triton"):
        return 0
    sms = sm_count or int(load_accounting().model["default_sm_count"])
    return min(_next_power_of_2(min(sms, rows)), sms) * vocab * 4


def sampler_peak_bytes(sampler: Sampler, *, rows: int, vocab: int, sm_count: int | None,
                       speculative: bool) -> int:
    """The logits' share of the sampler's peak (rows x vocab x bytes, plus Triton's buffer);
    speculative decoding's rejection pass needs at least its own bytes per logit."""
    per_logit = sampler_bytes_per_logit(sampler, rows)
    if speculative:
        per_logit = max(per_logit, int(load_accounting().model["speculative_sampler_bytes_per_logit"]))
    return rows * vocab * per_logit + triton_buffer_bytes(sampler, rows, vocab, sm_count)
