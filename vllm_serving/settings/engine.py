"""`vllm-serving:engine`: vLLM's engine flags."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator
from pydantic.alias_generators import to_camel

from vllm_serving.engine.extra_args import SECRET_FLAGS, secret_key_in
from vllm_serving.engine.flags import SECRET_ENV
from vllm_serving.settings.base import EnvName, Section, fix_error
from vllm_serving.settings.credential_names import is_credential_name
from vllm_serving.settings.text_checks import check_text, no_control

KvCacheDtype = Literal["auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"]
Dtype = Literal["auto", "half", "float16", "bfloat16", "float", "float32"]
# A quantization method's name as vLLM spells them (awq, gptq_marlin, compressed-tensors,
# modelopt_fp4 ...): which exist is the image's release's, checked by rules/quantization.py
# (`quantization-unknown`, from the registry).
_METHOD_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")


def _method_name(value: str) -> str:
    return check_text(value, _METHOD_NAME, f"{value!r} is not a quantization method name",
                      "write the method as vLLM names it, e.g. fp8, awq_marlin or gptq_marlin")


Quantization = Annotated[str, AfterValidator(_method_name)]
# Attention backend names as the release's registry enum spells them (FLASH_ATTN, FLASHINFER,
# TRITON_ATTN, TRITON_MLA ...; vLLM upper-cases what it is given, `auto` means none): which names
# exist is the release's, checked by rules/attention.py (`attention-backend-unknown`).
_BACKEND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def _backend_name(value: str) -> str:
    return check_text(value, _BACKEND_NAME, f"{value!r} is not an attention backend name",
                      "write the backend's name as vLLM lists it, e.g. FLASHINFER or TRITON_ATTN")


AttentionBackend = Annotated[str, AfterValidator(_backend_name)]


def _no_secret(item: str) -> str:
    """A secret flag in extraArgs, refused while the settings load: `render` and `diff` print the
    argv without running the rules. Everything else about an item depends on the image's vLLM
    release and is the `extra-arg-*` rules' (vllm_serving/rules/extra_args.py)."""
    key = secret_key_in(item)
    if key is not None:
        flag = next(f for f, k in SECRET_FLAGS.items() if k == key)
        raise fix_error(f"this item passes (or misspells) {flag}, a secret: its value would sit in plain "
                        "text in the stack file, the container spec and the process list",
                        f"remove it and its value from engine.extraArgs and run: pulumi config set --secret {key}")
    return item


MAX_EXTRA_ARGS = 128
"""vLLM's serve command has about 400 flags; a stack passes a few. Each item is read as vLLM reads
its argv (vllm_serving/engine/extra_args.py), so the list is capped: a hostile one stays fast."""
MAX_EXTRA_ARG_CHARS = 4096


def _one_line(item: str) -> str:
    if len(item) > MAX_EXTRA_ARG_CHARS:
        raise fix_error(f"an engine.extraArgs item of {len(item)} characters ({item[:40]!r}...)",
                        f"keep each item to at most {MAX_EXTRA_ARG_CHARS} characters")
    return no_control(item, f"engine.extraArgs item {item.strip()[:40]!r}")


def _few(items: object) -> object:
    if isinstance(items, (list, tuple)) and len(items) > MAX_EXTRA_ARGS:
        raise fix_error(f"engine.extraArgs has {len(items)} items", f"pass at most {MAX_EXTRA_ARGS}: vLLM flags "
                        "this project models have keys of their own (vllm-stack check names them)")
    return items


ExtraArg = Annotated[str, AfterValidator(_one_line), AfterValidator(_no_secret)]
# Other names of the variables the secrets become: huggingface_hub still reads its older
# HUGGING_FACE_HUB_TOKEN when HF_TOKEN is unset (huggingface_hub/constants.py).
_SECRET_ENV_ALIASES = {"HUGGING_FACE_HUB_TOKEN": "hfToken"}
# Parser and speculative method names as vLLM registers them: qwen3_coder, deepseek_r1, granite-20b-fc.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _checked_name(value: str | None) -> str | None:
    if value is None:
        return None
    return check_text(value, _NAME, f"{value!r} is not a parser or method name",
                      "write the name as vLLM registers it, e.g. qwen3 or qwen3_coder")


Name = Annotated[str, AfterValidator(_checked_name)]


class SpeculativeSettings(Section):
    """Speculative decoding (`--speculative-config`)."""

    method: Name = Field(min_length=1)
    """Draft method: `mtp` for models with multi-token-prediction layers, `eagle`, `ngram`, ..."""
    num_speculative_tokens: int = Field(ge=1)
    """Tokens the draft proposes per step; more than the model's MTP layers lowers acceptance."""
    model: str | None = None
    """Draft model path for methods that need one (eagle, draft models)."""

    @field_validator("model")
    @classmethod
    def _model(cls, value: str | None) -> str | None:
        if value is not None and (not value or re.search(r"[\s\x00-\x1f\x7f]", value)):
            raise fix_error(f"{value!r} is not a model path or id",
                            "write a path inside the container or a Hugging Face id, without spaces")
        return value


AUTO_FIT = -1
"""`--max-model-len -1` (or `auto`): vLLM sizes the context to what the KV cache holds
(engine/arg_utils.py `human_readable_int_or_auto`; v1/core/kv_cache_utils.py `_auto_fit_max_model_len`)."""
MIN_MODEL_LEN = 16


class EngineSettings(Section):
    """vLLM engine flags. Unset flags are not rendered: vLLM's own default applies."""

    tensor_parallel_size: int | None = Field(default=None, ge=1, le=64)
    """GPUs one model replica is split across (`--tensor-parallel-size`)."""
    pipeline_parallel_size: int | None = Field(default=None, ge=1, le=64)
    """Pipeline stages (`--pipeline-parallel-size`); TP x PP GPUs in all."""
    data_parallel_size: int | None = Field(default=None, ge=1, le=64)
    """Engines in one server (`--data-parallel-size`), each with TP x PP GPUs, its own weights and KV cache."""
    dtype: Dtype | None = None
    """Compute dtype (`--dtype`); `half` on GPUs without bfloat16 (V100, T4)."""
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    """Share of each GPU's memory vLLM may use (`--gpu-memory-utilization`), in (0, 1]."""
    max_model_len: int | None = Field(default=None, ge=AUTO_FIT)
    """Longest request in tokens, prompt plus output (`--max-model-len`)."""
    # -1 (AUTO_FIT) is vLLM's "fit it to the KV cache": accepted beside 16 and up (docs/rules.md)
    kv_cache_dtype: KvCacheDtype | None = None
    """KV cache dtype (`--kv-cache-dtype`); fp8 halves it where the GPU supports it."""
    quantization: Quantization | None = None
    """Force a quantization method (`--quantization`); vLLM reads it from the checkpoint otherwise."""
    enable_prefix_caching: bool | None = None
    """`--enable-prefix-caching` (true) or `--no-enable-prefix-caching` (false); on by default in V1."""
    attention_backend: AttentionBackend | None = None
    """Force an attention backend (`--attention-backend`), e.g. FLASHINFER for an FP8 KV cache on A100."""
    reasoning_parser: Name | None = None
    """`--reasoning-parser`, e.g. `qwen3`."""
    tool_call_parser: Name | None = None
    """`--tool-call-parser`, e.g. `qwen3_coder`; needs `enableAutoToolChoice`."""
    enable_auto_tool_choice: bool = False
    """`--enable-auto-tool-choice`: let the model decide to call tools."""
    speculative_config: SpeculativeSettings | None = None
    """`--speculative-config`, e.g. {method: mtp, numSpeculativeTokens: 1}."""
    max_num_seqs: int | None = Field(default=None, ge=1)
    """Most sequences in one batch (`--max-num-seqs`)."""
    max_num_batched_tokens: int | None = Field(default=None, ge=1)
    """Most tokens in one batch (`--max-num-batched-tokens`)."""
    trust_remote_code: bool = False
    """`--trust-remote-code`: run Python shipped with the weights; not needed for native architectures."""
    extra_args: Annotated[tuple[ExtraArg, ...], BeforeValidator(_few)] = ()
    """vLLM flags not modelled here, appended verbatim in order, e.g. [--enforce-eager]; at most 128 items."""
    env: dict[EnvName, str] = {}
    """Extra environment variables for the container, rendered sorted by name."""

    @field_validator("max_model_len")
    @classmethod
    def _max_model_len(cls, value: int | None) -> int | None:
        if value is not None and value != AUTO_FIT and value < MIN_MODEL_LEN:
            raise fix_error(f"maxModelLen {value} is too short: it must be at least {MIN_MODEL_LEN}",
                            f"set engine.maxModelLen to at least {MIN_MODEL_LEN} tokens, or -1 to let vLLM fit "
                            "it to the KV cache")
        return value

    @field_validator("env", mode="before")
    @classmethod
    def _env_names(cls, value: object) -> object:
        """A key of this section indented under env, or a flag written as a variable, is refused
        here with the fix: rendered as a variable it would do nothing, silently."""
        if not isinstance(value, dict):
            return value
        engine_keys = {to_camel(name): name for name in cls.model_fields if name != "env"}
        for name in value:
            text = str(name)
            key = engine_keys.get(text) or engine_keys.get(to_camel(text.lstrip("-").replace("-", "_")))
            if key is not None:
                raise fix_error(
                    f"{text} is an engine setting, not an environment variable: indented under env, "
                    "it would reach the container as a variable vLLM never reads",
                    f"move it out of env, directly under vllm-serving:engine (as {to_camel(key)})", field=text)
            if not _ENV_NAME.fullmatch(text):
                raise fix_error(
                    f"{text!r} is not an environment variable name",
                    "use letters, digits and '_', not starting with a digit; vLLM flags go in the engine "
                    "section or engine.extraArgs", field=text)
        return value

    @field_validator("env")
    @classmethod
    def _no_secrets_in_env(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            key = _SECRET_ENV_ALIASES.get(name) or next((k for k, v in SECRET_ENV.items() if v == name), None)
            if key is not None:
                raise fix_error(f"{name} would sit in plain text in the stack and the container spec",
                                f"remove it from engine.env and run: pulumi config set --secret {key}")
            if is_credential_name(name):
                raise fix_error(f"{name} looks like a credential, which engine.env keeps in plain text",
                                "keep credentials out of engine.env; use the secrets "
                                + ", ".join(SECRET_ENV) + " (pulumi config set --secret)")
        return value

    @property
    def gpus_needed(self) -> int:
        """GPUs of one server: TP x PP x DP."""
        return (self.tensor_parallel_size or 1) * (self.pipeline_parallel_size or 1) * (self.data_parallel_size or 1)


