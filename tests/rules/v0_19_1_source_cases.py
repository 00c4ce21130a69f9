# ruff: noqa: E501 - one case a line or two: its id, verdict and the source lines that decide it read together
"""Stacks as users write them, each with the decision vLLM v0.19.1 makes at start-up, read from
its source (paths under `vllm/` of the v0.19.1 wheel, line numbers of that release).

Written from vLLM's source, not from the rules: each case names the lines that decide it.
"refuses" means vLLM exits before serving (while parsing, building its config, building the
model or capturing its graphs); "starts" means it serves. Most refusals sit beside a twin one
step away that starts. `codes` names the finding the stack must raise (the reason, not only the
verdict). Quantized checkpoints are the base model's published config.json with the
`quantization_config` the named checkpoint publishes (`QUANT`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.paths import FIXTURES, ROOT

REFUSES, STARTS = "refuses", "starts"
CONFIGS = ROOT / "tests" / "catalog" / "configs"
QWEN3_8B = CONFIGS / "Qwen--Qwen3-8B.config.json"
QWEN3_32B = CONFIGS / "Qwen--Qwen3-32B.config.json"
LLAMA_70B = CONFIGS / "meta-llama--Meta-Llama-3.1-70B.config.json"
QWEN3_4B = FIXTURES / "hf" / "qwen3-4b.config.json"
DSV2_LITE = FIXTURES / "hf" / "deepseek-v2-lite-chat.config.json"
PHI3_MINI = FIXTURES / "hf" / "phi-3-mini-4k-instruct.config.json"
GEMMA3_1B = FIXTURES / "hf" / "gemma-3-1b-it.config.json"

# quantization_config of published checkpoints: Qwen/Qwen3-8B-AWQ, Qwen/Qwen3-8B-GPTQ-Int4 style
# GPTQ, Qwen/Qwen3-4B-FP8, RedHatAI/*-FP8-dynamic (llm-compressor W8A8 FP8), RedHatAI/*-quantized.w4a16,
# unsloth/*-bnb-4bit, nvidia/*-FP8 (ModelOpt)
QUANT: dict[str, dict[str, Any]] = {
    "awq": {"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq",
            "version": "gemm", "zero_point": True},
    "gptq": {"bits": 4, "group_size": 128, "desc_act": False, "sym": True, "quant_method": "gptq",
             "damp_percent": 0.01, "true_sequential": True, "static_groups": False},
    "fp8-block": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]},
    "ct-w8a8-fp8": {"quant_method": "compressed-tensors", "format": "float-quantized", "quantization_status": "compressed",
                    "ignore": ["lm_head"], "config_groups": {"group_0": {
                        "targets": ["Linear"],
                        "weights": {"type": "float", "num_bits": 8, "strategy": "channel", "symmetric": True,
                                    "dynamic": False},
                        "input_activations": {"type": "float", "num_bits": 8, "strategy": "token", "symmetric": True,
                                              "dynamic": True}}}},
    "ct-w4a16": {"quant_method": "compressed-tensors", "format": "pack-quantized", "quantization_status": "compressed",
                 "ignore": ["lm_head"], "config_groups": {"group_0": {
                     "targets": ["Linear"], "input_activations": None,
                     "weights": {"type": "int", "num_bits": 4, "strategy": "group", "group_size": 128,
                                 "symmetric": True, "dynamic": False}}}},
    "bnb-4bit": {"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": False,
                 "bnb_4bit_quant_type": "nf4", "bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_use_double_quant": True},
    "modelopt-fp8": {"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["lm_head"]},
}


@dataclass(frozen=True)
class Case:
    id: str
    expect: str
    source: str
    """The vLLM v0.19.1 lines that decide it."""
    stack: dict[str, Any]
    """Sections of the stack file (camelCase keys), merged into BASE; None removes a key."""
    codes: tuple[str, ...] = ()
    """For a refusal: the finding codes the stack raises (at least one of them)."""
    config: tuple[Any, ...] | None = None
    """(base config.json path, keys to set): the model is given as model.configFile."""
    extra: dict[str, Any] = field(default_factory=dict)
    marks: tuple[Any, ...] = ()
    """pytest marks: a case the rules still decide wrongly is xfail(strict=True) with the reason."""


BASE: dict[str, Any] = {
    "target": {"kind": "docker"},
    "hardware": {"gpu": "A100-80GB", "count": 8},
    "image": {"repository": "vllm/vllm-openai", "tag": "v0.19.1"},
    "model": {"name": "Qwen3-8B", "hostPath": "/data/models/model", "containerPath": "/models/model"},
    "engine": {"maxModelLen": 8192},
}


def gpu(name: str, count: int = 8) -> dict[str, Any]:
    return {"hardware": {"gpu": name, "count": count}}


def model(name: str) -> dict[str, Any]:
    return {"model": {"name": name}}


def engine(**keys: Any) -> dict[str, Any]:
    return {"engine": keys}


def on(*parts: dict[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in parts:
        for section, keys in part.items():
            merged.setdefault(section, {}).update(keys)
    return merged


def spec(method: str, tokens: int, draft: str | None = None) -> dict[str, Any]:
    return {"method": method, "numSpeculativeTokens": tokens, **({"model": draft} if draft else {})}


def quantized(base: Any, method: str, **more: Any) -> tuple[Any, ...]:
    return (base, {"quantization_config": QUANT[method], **more})


def case(id: str, expect: str, source: str, *parts: dict[str, Any], codes: tuple[str, ...] = (),
         config: tuple[Any, ...] | None = None, marks: tuple[Any, ...] = ()) -> Case:
    return Case(id, expect, source, on(*parts), codes, config, marks=marks)


R, S = REFUSES, STARTS
# the sources, by class -----------------------------------------------------------------------------
SELECT = ("platforms/cuda.py:249 get_attn_backend_cls (a forced backend: raise at 269); :51 _get_backend_priorities; "
          "v1/attention/backend.py:251 validate_configuration")
FA = "v1/attention/backends/flash_attn.py:165 supports_kv_cache_dtype, :173 supports_sink, :179, :183 supports_combination; fa_utils.py:56 get_flash_attn_version, :157"
FI = "v1/attention/backends/flashinfer.py:319 dtypes, :388 head sizes, :393 CC 7.5-12.1, :399 supports_sink (utils/flashinfer.py:283 SM100)"
TRITON = "v1/attention/backends/triton_attn.py:259 dtypes incl. float32, :331 mm_prefix, :335 sinks, :399 self.fp8_dtype = current_platform.fp8_dtype(), :476 cache.view(fp8_dtype)"
TRITON_FP8 = TRITON + "; Triton compiles float8_e4m3fn (fp8e4nv) only from sm_89"
MM_PREFIX = "config/model.py:1195 is_mm_prefix_lm (gemma3); model_executor/layers/attention/attention.py:290 use_mm_prefix"
SINKS = "model_executor/layers/attention/attention.py:286 has_sink (gpt-oss passes sinks=)"
DTYPE = "config/model.py:1929 _resolve_auto_dtype, :1919 _check_valid_dtype (_FLOAT16_NOT_SUPPORTED_MODELS :1903); platforms/cuda.py:462 check_if_supports_dtype"
QUANT_CFG = "config/vllm.py:501 _get_quantization_config (min capability :515, act dtypes :523)"
VERIFY_Q = "config/model.py:924 _verify_quantization (mismatch :988, unknown :997, deprecated :1012)"
CT_SCHEME = ("model_executor/layers/quantization/compressed_tensors/compressed_tensors.py:630 W8A8Fp8 else W8A16Fp8, :758 "
             "_check_scheme_supported; schemes/compressed_tensors_w8a16_fp8.py:51, wNa16.py:81 (75)")
FP8_LINEAR = "model_executor/layers/quantization/utils/fp8_utils.py:1425 validate_fp8_block_shape (row :1448, column :1468)"
FP8_MOE = "model_executor/layers/quantization/fp8.py:637 Fp8MoEMethod.create_weights; fused_moe/config.py FusedMoEParallelConfig.make (TP x DP flattened without EP)"
MAX_LEN = "config/model.py:2045 _get_and_verify_max_len (YaRN :2118, raise :2178); config/model.py:473-508 dict hf_overrides applied after get_config"
SPEC_CFG = "config/speculative.py:351 __post_init__ (:396 no model, :530 Unsupported speculative method, hf_config_override :227)"
AUX = "config/speculative.py:770 _verify_args: aux_hidden_states_supported (:815 substring of hf_text_config.model_type)"
SCHED = "engine/arg_utils.py:2024 get_batch_defaults, :2180 _set_default_max_num_seqs_and_batched_tokens_args; config/scheduler.py:259 verify_max_model_len"
ENVS = "envs.py:310 env_with_choices; distributed/utils.py:95 get_pp_indices (:116-122)"
PARALLEL = "config/model.py:1105 verify_with_parallel_config; model_executor/layers/linear.py:1014 QKVParallelLinear divide"
MLA = "platforms/cuda.py:59 MLA priorities; v1/attention/backends/mla/flashmla.py:73, ops/flashmla.py:51 (Hopper only); mla/triton_mla.py:61"
MLA_FP8 = "model_executor/layers/attention/mla_attention.py:586 kv_cache.view(current_platform.fp8_dtype()); mla/triton_mla.py (Triton decode kernel)"

CASES: list[Case] = [
    # -- forced attention backends vs the model and the GPU ----------------------------------------
    case("gpt-oss sinks, FLASH_ATTN on A100 (FA2)", R, f"{SELECT}; {FA}; {SINKS}", model("gpt-oss-20b"),
         engine(attentionBackend="FLASH_ATTN"), codes=("attention-backend-unsupported",)),
    case("twin: gpt-oss sinks, FLASH_ATTN on H100 (FA3)", S, f"{FA}", gpu("H100-80GB"), model("gpt-oss-20b"),
         engine(attentionBackend="FLASH_ATTN")),
    case("gpt-oss sinks, FLASHINFER on H100 (no TRT-LLM below SM100)", R, f"{SELECT}; {FI}", gpu("H100-80GB"),
         model("gpt-oss-20b"), engine(attentionBackend="FLASHINFER"), codes=("attention-backend-unsupported",)),
    case("twin: gpt-oss sinks, FLASHINFER on B200", S, FI, gpu("B200"), model("gpt-oss-20b"),
         engine(attentionBackend="FLASHINFER")),
    case("gpt-oss sinks, FLEX_ATTENTION", R, "v1/attention/backends/flex_attention.py (no supports_sink)",
         model("gpt-oss-20b"), engine(attentionBackend="FLEX_ATTENTION"), codes=("attention-backend-unsupported",)),
    case("gpt-oss on A100, auto: Triton", S, f"{SELECT}; {TRITON}", model("gpt-oss-20b")),
    case("Gemma 3 multimodal prefix, FLASHINFER", R, f"{SELECT}; {MM_PREFIX}", model("gemma-3-27b-it"),
         engine(attentionBackend="FLASHINFER"), codes=("attention-backend-unsupported",)),
    case("Gemma 3, FLASHINFER even with --language-model-only (is_mm_prefix_lm reads the config)", R, MM_PREFIX,
         model("gemma-3-27b-it"), engine(attentionBackend="FLASHINFER", extraArgs=["--language-model-only"]),
         codes=("attention-backend-unsupported",)),
    case("twin: Gemma 3, TRITON_ATTN", S, TRITON, model("gemma-3-27b-it"), engine(attentionBackend="TRITON_ATTN")),
    case("twin: Gemma 3, FLEX_ATTENTION", S, "v1/attention/backends/flex_attention.py:100 supports_mm_prefix",
         model("gemma-3-27b-it"), engine(attentionBackend="FLEX_ATTENTION")),
    case("text-only Gemma 3 (gemma3_text) has no multimodal prefix: FLASHINFER", S, MM_PREFIX,
         engine(attentionBackend="FLASHINFER"), config=(GEMMA3_1B, {})),
    case("float32 on FLASHINFER", R, f"{SELECT}; {FI}", engine(dtype="float32", attentionBackend="FLASHINFER"),
         codes=("attention-backend-unsupported",)),
    case("twin: float32, auto (Triton)", S, TRITON, engine(dtype="float32")),
    case("FLASH_ATTN on V100 (CC 8.0+)", R, FA, gpu("V100-32GB"), engine(dtype="half", attentionBackend="FLASH_ATTN"),
         codes=("attention-backend-unsupported",)),
    case("twin: FLASHINFER on T4 (7.5)", S, FI, gpu("T4"), model("Qwen3-4B"), engine(attentionBackend="FLASHINFER")),
    case("head size 96 (Phi-3-mini) on FLASHINFER", R, FI, engine(attentionBackend="FLASHINFER", maxModelLen=4096),
         config=(PHI3_MINI, {}), codes=("attention-backend-unsupported",)),
    case("twin: head size 96, auto (FlashAttention takes multiples of 8)", S, FA, engine(maxModelLen=4096),
         config=(PHI3_MINI, {})),
    case("attention backend misspelt", R, "config/attention.py validate_backend_before; v1/attention/backends/registry.py",
         engine(attentionBackend="FLASH_ATTENTION"), codes=("attention-backend-unknown",)),
    case("twin: attention backend in lower case, auto", S, "config/attention.py validate_backend_before (upper-cases)",
         engine(attentionBackend="flashinfer")),
    case("--block-size 8 with FLASHINFER (16, 32, 64)", R, "v1/attention/backends/flashinfer.py:330; backend.py:170 supports_block_size",
         engine(attentionBackend="FLASHINFER", extraArgs=["--block-size", "8"]), codes=("attention-backend-unsupported",)),
    case("twin: --block-size 32 with FLASHINFER", S, "v1/attention/backends/flashinfer.py:330",
         engine(attentionBackend="FLASHINFER", extraArgs=["--block-size", "32"])),
    case("--block-size 8, auto on A100: FA, FlashInfer, Triton take multiples of 16, FLEX_ATTENTION any", S,
         f"{SELECT}; v1/attention/selector.py:74 (user block size); flash_attn.py:72, triton_attn.py:274, backend.py:64",
         engine(extraArgs=["--block-size", "8"])),
    case("--block-size 8 with TRITON_ATTN forced", R, "v1/attention/backends/triton_attn.py:274 MultipleOf(16)",
         engine(attentionBackend="TRITON_ATTN", extraArgs=["--block-size", "8"]),
         codes=("attention-backend-unsupported",)),
    case("Gemma 3, FLASH_ATTN forced on H100 (no multimodal prefix in FlashAttention)", R, f"{SELECT}; {MM_PREFIX}",
         gpu("H100-80GB"), model("gemma-3-27b-it"), engine(attentionBackend="FLASH_ATTN"),
         codes=("attention-backend-unsupported",)),
    case("head size 96 (Phi-3-mini) on FLASHINFER on B200", R, FI, gpu("B200"),
         engine(attentionBackend="FLASHINFER", maxModelLen=4096), config=(PHI3_MINI, {}),
         codes=("attention-backend-unsupported",)),
    # -- FP8 KV cache: spelling, backend and GPU -----------------------------------------------------
    case("fp8 KV on V100: Triton stores e4m3fn", R, f"{SELECT}; {TRITON_FP8}", gpu("V100-32GB"),
         engine(dtype="half", kvCacheDtype="fp8"), codes=("fp8-kv-cache-unsupported",)),
    case("fp8_e5m2 KV on V100: stored as e4m3fn too", R, TRITON_FP8, gpu("V100-32GB"),
         engine(dtype="half", kvCacheDtype="fp8_e5m2"), codes=("fp8-kv-cache-unsupported",)),
    case("twin: fp8 KV on T4 (FlashInfer)", S, FI, gpu("T4"), model("Qwen3-4B"), engine(kvCacheDtype="fp8")),
    case("fp8 KV on A100: FlashAttention 2 refuses, FlashInfer takes it", S, f"{FA}; {FI}", engine(kvCacheDtype="fp8")),
    case("fp8 KV on A100 with FLASH_ATTN forced", R, FA, engine(kvCacheDtype="fp8", attentionBackend="FLASH_ATTN"),
         codes=("fp8-kv-cache-backend",)),
    case("fp8 KV, gpt-oss on A100: sinks leave Triton", R, f"{FA}; {FI}; {TRITON_FP8}", model("gpt-oss-20b"),
         engine(kvCacheDtype="fp8"), codes=("fp8-kv-cache-unsupported",)),
    case("twin: fp8 KV, gpt-oss on L40S (8.9)", S, TRITON_FP8, gpu("L40S"), model("gpt-oss-20b"),
         engine(kvCacheDtype="fp8")),
    case("twin: fp8 KV, gpt-oss on H100 (FA3 sinks and fp8)", S, FA, gpu("H100-80GB"), model("gpt-oss-20b"),
         engine(kvCacheDtype="fp8")),
    case("fp8 KV, Gemma 3 on A100: multimodal prefix leaves Triton", R, f"{MM_PREFIX}; {TRITON_FP8}",
         model("gemma-3-27b-it"), engine(kvCacheDtype="fp8"), codes=("fp8-kv-cache-unsupported",)),
    case("twin: fp8 KV, Gemma 3 on H100", S, TRITON_FP8, gpu("H100-80GB"), model("gemma-3-27b-it"),
         engine(kvCacheDtype="fp8")),
    case("fp8 KV, head size 96 on A100: Triton", R, f"{FI}; {TRITON_FP8}", engine(kvCacheDtype="fp8", maxModelLen=4096),
         config=(PHI3_MINI, {}), codes=("fp8-kv-cache-unsupported",)),
    case("twin: fp8 KV, head size 96 on L40S", S, TRITON_FP8, gpu("L40S"), engine(kvCacheDtype="fp8", maxModelLen=4096),
         config=(PHI3_MINI, {})),
    case("fp8_e5m2 KV on H100: FlashAttention 3 picked, raises on e5m2", R,
         "v1/attention/backends/flash_attn.py:154 get_fp8_dtype_for_flashattn (called by the metadata builder :411)",
         gpu("H100-80GB"), engine(kvCacheDtype="fp8_e5m2"), codes=("fp8-kv-cache-unsupported",)),
    case("twin: fp8_e4m3 KV on H100", S, FA, gpu("H100-80GB"), engine(kvCacheDtype="fp8_e4m3")),
    case("fp8 KV with FLASH_ATTN on B200 (FA4 has no fp8)", R, FA, gpu("B200"),
         engine(kvCacheDtype="fp8", attentionBackend="FLASH_ATTN"), codes=("fp8-kv-cache-backend",)),
    case("twin: fp8 KV on B200, auto (FlashInfer first)", S, f"{SELECT}; {FI}", gpu("B200"), engine(kvCacheDtype="fp8")),
    case("FLEX_ATTENTION forced with an fp8 KV cache (auto, float16, bfloat16 only)", R,
         "v1/attention/backends/flex_attention.py:82", engine(kvCacheDtype="fp8", attentionBackend="FLEX_ATTENTION"),
         codes=("fp8-kv-cache-backend",)),
    case("fp8_e5m2 KV on A100, auto: FlashAttention 2 refuses fp8, FlashInfer lists e5m2", S, f"{FA}; {FI}",
         engine(kvCacheDtype="fp8_e5m2")),
    case("float32 with FLASH_ATTN forced (half and bfloat16 only)", R, f"{SELECT}; {FA}",
         engine(dtype="float32", attentionBackend="FLASH_ATTN"), codes=("attention-backend-unsupported",)),
    case("fp8_e5m2 KV with TRITON_ATTN on L40S (stored e4m3fn, 8.9)", S, TRITON_FP8, gpu("L40S"),
         engine(kvCacheDtype="fp8_e5m2", attentionBackend="TRITON_ATTN")),
    case("fp8 KV on a hybrid Qwen3.5 on V100 (Triton)", R, TRITON_FP8, gpu("V100-32GB"), model("Qwen3.5-27B"),
         engine(tensorParallelSize=4, dtype="half", kvCacheDtype="fp8"), codes=("fp8-kv-cache-unsupported",)),
    # -- MLA (DeepSeek-V2-Lite) ------------------------------------------------------------------------
    case("MLA on A100, auto: TRITON_MLA", S, MLA, config=(DSV2_LITE, {})),
    case("MLA, FLASHMLA forced on A100 (Hopper only)", R, MLA, engine(attentionBackend="FLASHMLA"),
         config=(DSV2_LITE, {}), codes=("model-mla-attention-backend",)),
    case("twin: MLA, FLASHMLA on H100", S, MLA, gpu("H100-80GB"), engine(attentionBackend="FLASHMLA"),
         config=(DSV2_LITE, {})),
    case("MLA, FLASHINFER (not an MLA backend)", R, f"{SELECT} (MLA not supported)",
         engine(attentionBackend="FLASHINFER"), config=(DSV2_LITE, {}), codes=("model-mla-attention-backend",)),
    case("MLA, fp8 KV on A100: TRITON_MLA reads e4m3fn through Triton", R, f"{MLA}; {MLA_FP8}",
         engine(kvCacheDtype="fp8"), config=(DSV2_LITE, {}), codes=("fp8-kv-cache-unsupported",)),
    case("twin: MLA, fp8 KV on L40S", S, MLA_FP8, gpu("L40S"), engine(kvCacheDtype="fp8"), config=(DSV2_LITE, {})),
    case("twin: MLA, fp8 KV on H100 (FLASHMLA)", S, MLA, gpu("H100-80GB"), engine(kvCacheDtype="fp8"),
         config=(DSV2_LITE, {})),
    case("MLA, FLASH_ATTN_MLA forced on A100 (9.x only)", R, "v1/attention/backends/mla/flashattn_mla.py:68",
         engine(attentionBackend="FLASH_ATTN_MLA"), config=(DSV2_LITE, {}), codes=("model-mla-attention-backend",)),
    case("twin: MLA, FLASH_ATTN_MLA on H100", S, "v1/attention/backends/mla/flashattn_mla.py:68", gpu("H100-80GB"),
         engine(attentionBackend="FLASH_ATTN_MLA"), config=(DSV2_LITE, {})),
    case("MLA, CUTLASS_MLA forced on H100 (10.x only)", R, "v1/attention/backends/mla/cutlass_mla.py:65",
         gpu("H100-80GB"), engine(attentionBackend="CUTLASS_MLA"), config=(DSV2_LITE, {}),
         codes=("model-mla-attention-backend",)),
    case("MLA, fp8_e5m2 KV (no MLA backend lists it)", R, MLA, engine(kvCacheDtype="fp8_e5m2"),
         config=(DSV2_LITE, {}), codes=("model-mla-no-backend",)),
    # -- dtype, float16-refusing models ----------------------------------------------------------------
    case("bfloat16 on V100", R, DTYPE, gpu("V100-32GB"), engine(dtype="bfloat16"), codes=("dtype-bf16-unsupported",)),
    case("twin: auto dtype on V100 (falls back to float16)", S, DTYPE, gpu("V100-32GB")),
    case("Gemma 3 in float16 on V100", R, DTYPE, gpu("V100-32GB", 2), model("gemma-3-12b-it"),
         engine(tensorParallelSize=2, dtype="half"), codes=("dtype-fp16-refused",)),
    case("twin: Gemma 3 auto on V100 (float32, Triton)", S, f"{DTYPE}; {TRITON}", gpu("V100-32GB", 2),
         model("gemma-3-12b-it"), engine(tensorParallelSize=2)),
    case("gemma3_text in float16 on T4", R, DTYPE, gpu("T4"), engine(dtype="half"), config=(GEMMA3_1B, {}),
         codes=("dtype-fp16-refused",)),
    # -- quantization vs dtype and GPU ---------------------------------------------------------------
    case("mxfp4 (gpt-oss) in float16", R, f"{QUANT_CFG}; model_executor/layers/quantization/mxfp4.py:59",
         model("gpt-oss-20b"), engine(dtype="half"), codes=("quantization-dtype-unsupported",)),
    case("mxfp4 on T4 (CC 8.0+)", R, f"{QUANT_CFG}; mxfp4.py:51", gpu("T4"), model("gpt-oss-20b"),
         codes=("quantization-cc-too-low",)),
    case("AWQ on V100: no Marlin below 7.5, AWQ needs 7.5", R,
         f"{VERIFY_Q}; {QUANT_CFG}; quantization/awq.py:75; utils/marlin_utils.py:56", gpu("V100-32GB"),
         engine(dtype="half"), config=quantized(QWEN3_8B, "awq", torch_dtype="float16"), codes=("quantization-cc-too-low",)),
    case("twin: AWQ on T4 (awq_marlin)", S, "quantization/awq_marlin.py:232 override_quantization_method", gpu("T4"),
         config=quantized(QWEN3_8B, "awq", torch_dtype="float16")),
    case("AWQ forced plain awq in bfloat16", R, f"{QUANT_CFG}; quantization/awq.py:70 (half only)",
         engine(quantization="awq", dtype="bfloat16"), config=quantized(QWEN3_8B, "awq", torch_dtype="float16"),
         codes=("quantization-dtype-unsupported",)),
    case("twin: AWQ in bfloat16 through awq_marlin", S, "quantization/awq_marlin.py:203", engine(dtype="bfloat16"),
         config=quantized(QWEN3_8B, "awq", torch_dtype="float16")),
    case("GPTQ on V100 (gptq from 6.0)", S, "quantization/gptq.py:136", gpu("V100-32GB"), engine(dtype="half"),
         config=quantized(QWEN3_8B, "gptq", torch_dtype="float16")),
    case("GPTQ forced gptq_marlin on V100", R, f"{VERIFY_Q}; gptq_marlin.py:215", gpu("V100-32GB"),
         engine(dtype="half", quantization="gptq_marlin"), config=quantized(QWEN3_8B, "gptq", torch_dtype="float16"),
         codes=("quantization-checkpoint-mismatch", "quantization-cc-too-low")),
    case("FP8 checkpoint in float32", R, f"{QUANT_CFG}; quantization/fp8.py:142", model("Qwen3-32B-FP8"),
         engine(dtype="float32"), codes=("quantization-dtype-unsupported",)),
    case("online fp8 on V100 (7.5+)", R, f"{QUANT_CFG}; quantization/fp8.py:146", gpu("V100-32GB"),
         engine(quantization="fp8", dtype="half"), codes=("fp8-weights-unsupported",)),
    case("twin: online fp8 on T4 (weight-only Marlin)", S, "quantization/fp8.py:146", gpu("T4"), model("Qwen3-4B"),
         engine(quantization="fp8")),
    case("awq forced on a 16-bit checkpoint", R, "model_executor/model_loader/weight_utils.py get_quant_config",
         engine(quantization="awq"), codes=("quantization-checkpoint-mismatch",)),
    case("FP8 online quantization on V100 (Fp8Config 7.5)", R, f"{QUANT_CFG}; quantization/fp8.py:145",
         gpu("V100-32GB"), engine(dtype="half", quantization="fp8"), codes=("fp8-weights-unsupported",)),
    case("twin: FP8 online quantization on T4 (weight-only Marlin)", S, "quantization/fp8.py:145; utils/marlin_utils_fp8.py",
         gpu("T4"), model("Qwen3-4B"), engine(quantization="fp8")),
    case("mxfp4 (gpt-oss) in float32", R, f"{QUANT_CFG}; model_executor/layers/quantization/mxfp4.py:59",
         model("gpt-oss-20b"), engine(dtype="float32"), codes=("quantization-dtype-unsupported",)),
    case("AWQ checkpoint in bfloat16 on A100 (awq_marlin takes half and bfloat16)", S, "quantization/awq_marlin.py:203",
         engine(dtype="bfloat16"), config=quantized(QWEN3_8B, "awq", torch_dtype="float16")),
    case("GPTQ on V100: no Marlin, plain gptq from 6.0 in float16", S, "quantization/gptq.py:131, :136",
         gpu("V100-32GB"), engine(dtype="half"), config=quantized(QWEN3_8B, "gptq", torch_dtype="float16")),
    case("bitsandbytes 4-bit on V100 (7.0)", S, "quantization/bitsandbytes.py:101, :105", gpu("V100-32GB"),
         engine(dtype="half", maxModelLen=4096), config=quantized(QWEN3_32B, "bnb-4bit")),
    case("unknown quantization method", R, VERIFY_Q, engine(quantization="awq_int4"), codes=("quantization-unknown",)),
    case("deprecated experts_int8 without --allow-deprecated-quantization", R, VERIFY_Q, model("Qwen3-30B-A3B"),
         engine(quantization="experts_int8"), codes=("quantization-deprecated",)),
    case("compressed-tensors W8A8 FP8 on V100: W8A16 fallback needs 7.5", R, CT_SCHEME, gpu("V100-32GB"),
         engine(dtype="half"), config=quantized(QWEN3_8B, "ct-w8a8-fp8"), codes=("quantization-scheme-cc-too-low",)),
    case("twin: compressed-tensors W8A8 FP8 on T4 (weight-only W8A16)", S, CT_SCHEME, gpu("T4"),
         config=quantized(QWEN3_8B, "ct-w8a8-fp8")),
    case("compressed-tensors W4A16 on V100", R, CT_SCHEME, gpu("V100-32GB"), engine(dtype="half"),
         config=quantized(QWEN3_8B, "ct-w4a16"), codes=("quantization-scheme-cc-too-low",)),
    case("ModelOpt FP8 on A100 (8.9+)", R, f"{QUANT_CFG}; quantization/modelopt.py:409", config=quantized(
        QWEN3_8B, "modelopt-fp8"), codes=("quantization-cc-too-low",)),
    case("twin: ModelOpt FP8 on L40S", S, "quantization/modelopt.py:409", gpu("L40S"),
         config=quantized(QWEN3_8B, "modelopt-fp8")),
    # -- FP8 block quantization and the tensor-parallel split ---------------------------------------
    case("Qwen3-4B-FP8 at TP 8: 9728 / 8 = 1216 is not whole 128-blocks", R, FP8_LINEAR, gpu("A100-80GB", 8),
         engine(tensorParallelSize=8), config=quantized(QWEN3_4B, "fp8-block"), codes=("fp8-block-linear-split",)),
    case("twin: Qwen3-4B-FP8 at TP 4", S, FP8_LINEAR, gpu("A100-80GB", 4), engine(tensorParallelSize=4),
         config=quantized(QWEN3_4B, "fp8-block")),
    case("Qwen3-30B-A3B-FP8 at TP 4: experts 768 / 4 = 192", R, FP8_MOE, gpu("A100-80GB", 4),
         model("Qwen3-30B-A3B-FP8"), engine(tensorParallelSize=4), codes=("fp8-block-moe-split",)),
    case("twin: the same with expert parallelism", S, FP8_MOE, gpu("A100-80GB", 4), model("Qwen3-30B-A3B-FP8"),
         engine(tensorParallelSize=4, extraArgs=["--enable-expert-parallel"])),
    case("Qwen3-30B-A3B-FP8 at TP 2 x DP 2 without EP (split 4 ways)", R, FP8_MOE, gpu("A100-80GB", 4),
         model("Qwen3-30B-A3B-FP8"), engine(tensorParallelSize=2, dataParallelSize=2), codes=("fp8-block-moe-split",)),
    case("twin: Qwen3-30B-A3B-FP8 at TP 2", S, FP8_MOE, gpu("A100-80GB", 2), model("Qwen3-30B-A3B-FP8"),
         engine(tensorParallelSize=2)),
    case("Qwen3-235B-A22B-FP8 at TP 8: 1536 / 8 = 192", R, FP8_MOE, gpu("H100-80GB", 8), model("Qwen3-235B-A22B-FP8"),
         engine(tensorParallelSize=8), codes=("fp8-block-moe-split",)),
    case("twin: Qwen3-235B-A22B-FP8 at TP 4 x PP 2", S, FP8_MOE, gpu("H100-80GB", 8), model("Qwen3-235B-A22B-FP8"),
         engine(tensorParallelSize=4, pipelineParallelSize=2)),
    # -- context length and RoPE ------------------------------------------------------------------
    case("maxModelLen above max_position_embeddings", R, MAX_LEN, engine(maxModelLen=65536),
         codes=("max-model-len-exceeds-model",)),
    case("twin: maxModelLen 40960", S, MAX_LEN, engine(maxModelLen=40960)),
    case("YaRN x4 from --hf-overrides: 131072", S, MAX_LEN, engine(maxModelLen=131072, extraArgs=[
        "--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, '
        '"original_max_position_embeddings": 32768}}'])),
    case("YaRN x4 from --hf-overrides: one token more", R, MAX_LEN, engine(maxModelLen=131073, extraArgs=[
        "--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, '
        '"original_max_position_embeddings": 32768}}']), codes=("max-model-len-exceeds-model",)),
    case("rope_theta alone stretches nothing", R, MAX_LEN,
         engine(maxModelLen=65536, extraArgs=["--hf-overrides", '{"rope_theta": 5000000}']),
         codes=("max-model-len-exceeds-model",)),
    case("YaRN in the configFile (Qwen's model card)", S, MAX_LEN, engine(maxModelLen=131072), config=(QWEN3_8B, {
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})),
    case("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", S, f"{MAX_LEN}; envs.py VLLM_ALLOW_LONG_MAX_MODEL_LEN",
         engine(maxModelLen=65536, env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"})),
    case("maxModelLen -1: fitted to the KV cache", S, "config/model.py:2138 (-1); v1/core/kv_cache_utils.py auto-fit",
         model("Qwen3-32B"), engine(maxModelLen=-1)),
    case("flat max_position_embeddings override misses a multimodal model's text_config", R, MAX_LEN,
         gpu("A100-80GB", 2), model("Qwen3.5-27B"), engine(tensorParallelSize=2, maxModelLen=524288, extraArgs=[
             "--hf-overrides", '{"max_position_embeddings": 524288}']), codes=("max-model-len-exceeds-model",)),
    case("Llama 3.1: llama3 RoPE does not scale again (131072)", S, MAX_LEN, model("Llama-3.1-8B"),
         engine(maxModelLen=131072)),
    # -- speculative decoding -----------------------------------------------------------------------
    case("mtp on Qwen3-Next: rewritten to qwen3_next_mtp", S, SPEC_CFG, gpu("A100-80GB", 4),
         model("Qwen3-Next-80B-A3B-Thinking"), engine(tensorParallelSize=4, speculativeConfig=spec("mtp", 2))),
    case("mtp on Qwen3-8B: no MTP draft", R, SPEC_CFG, engine(speculativeConfig=spec("mtp", 1)),
         codes=("speculative-mtp-unsupported",)),
    case("mtp on gpt-oss (no MTP layers)", R, SPEC_CFG, model("gpt-oss-20b"), engine(speculativeConfig=spec("mtp", 1)),
         codes=("speculative-mtp-unsupported",)),
    case("ngram on a multimodal target (Gemma 3): no draft model, no check", S, "v1/spec_decode/ngram_proposer.py",
         model("gemma-3-27b-it"), engine(speculativeConfig=spec("ngram", 3))),
    case("mtp on Qwen3.5-27B with 4 tokens (n_predict 1 divides)", S, f"{SPEC_CFG}; :574", gpu("A100-80GB", 2),
         model("Qwen3.5-27B"), engine(tensorParallelSize=2, speculativeConfig=spec("mtp", 4))),
    case("draft model on a multimodal target", R, "v1/spec_decode/eagle.py:178 _raise_if_multimodal (:288)",
         gpu("A100-80GB", 2), model("Qwen3.5-27B"),
         engine(tensorParallelSize=2, speculativeConfig=spec("draft_model", 4, "/models/Qwen3-0.6B")),
         codes=("speculative-draft-model-multimodal",)),
    case("twin: draft model with --language-model-only", S, "multimodal/registry.py:103 supports_multimodal_inputs",
         gpu("A100-80GB", 2), model("Qwen3.5-27B"), engine(tensorParallelSize=2, extraArgs=["--language-model-only"],
                                                          speculativeConfig=spec("draft_model", 4, "/models/Qwen3-0.6B"))),
    case("ngram with 20 tokens (no upper bound)", S, SPEC_CFG, engine(speculativeConfig=spec("ngram", 20))),
    case("eagle3 on Gemma 3 (gemma3_text gives no aux hidden states)", R, AUX, model("gemma-3-27b-it"),
         engine(speculativeConfig=spec("eagle3", 3, "/models/eagle3-gemma")), codes=("speculative-target-unsupported",)),
    case("eagle3 on Mistral Small 3.1 (text model mistral)", R, AUX, model("Mistral-Small-3.1-24B-Instruct-2503"),
         engine(speculativeConfig=spec("eagle3", 3, "/models/eagle3-mistral")), codes=("speculative-target-unsupported",)),
    case("twin: eagle3 on Qwen3-8B", S, AUX, engine(speculativeConfig=spec("eagle3", 3, "/models/Qwen3-8B_eagle3"))),
    case("eagle without a draft model", R, f"{SPEC_CFG} (:396)", engine(speculativeConfig=spec("eagle", 3)),
         codes=("speculative-draft-model-missing",)),
    case("--async-scheduling with ngram", R, "config/vllm.py:735-745 __post_init__", engine(
        extraArgs=["--async-scheduling"], speculativeConfig=spec("ngram", 3)), codes=("speculative-async-scheduling",)),
    case("twin: ngram without --async-scheduling (turned off itself)", S, "config/vllm.py:755",
         engine(speculativeConfig=spec("ngram", 3))),
    case("unknown method", R, "config/speculative.py:52 SpeculativeMethod", engine(speculativeConfig=spec("lookahead", 3)),
         codes=("speculative-method-unknown",)),
    # -- the scheduler's batch limits, performance mode -------------------------------------------------
    case("maxNumSeqs 4096 on A100 (2048 tokens default)", R, SCHED, engine(maxNumSeqs=4096),
         codes=("max-num-batched-tokens-below-max-num-seqs",)),
    case("twin: maxNumSeqs 4096 on H100 (8192 default)", S, SCHED, gpu("H100-80GB"), engine(maxNumSeqs=4096)),
    case("twin: maxNumSeqs 4096 on A100 with --performance-mode throughput (x2)", S, f"{SCHED} (:2207)",
         engine(maxNumSeqs=4096, extraArgs=["--performance-mode", "throughput"])),
    case("maxNumSeqs 4097 with --performance-mode throughput", R, SCHED,
         engine(maxNumSeqs=4097, extraArgs=["--performance-mode", "throughput"]),
         codes=("max-num-batched-tokens-below-max-num-seqs",)),
    case("no chunked prefill, 8192 batched tokens under a 32768 context", R, SCHED,
         engine(maxModelLen=32768, maxNumBatchedTokens=8192, extraArgs=["--no-enable-chunked-prefill"]),
         codes=("max-num-batched-tokens-below-max-model-len",)),
    case("twin: no chunked prefill with the default tokens (raised to the context)", S, f"{SCHED} (:2219)",
         engine(maxModelLen=32768, extraArgs=["--no-enable-chunked-prefill"])),
    case("--max-num-partial-prefills 2", R, "engine/arg_utils.py:1996 _check_feature_supported",
         engine(extraArgs=["--max-num-partial-prefills", "2"]), codes=("extra-arg-feature-gate",)),
    case("--performance-mode fast (not a choice)", R, "config/vllm.py PerformanceMode; argparse choices",
         engine(extraArgs=["--performance-mode", "fast"]), codes=("extra-arg-choice",)),
    case("--load-format safetensor (no such loader)", R, "model_executor/model_loader/__init__.py:120 get_model_loader",
         engine(extraArgs=["--load-format", "safetensor"]), codes=("extra-arg-load-format-unknown",)),
    case("twin: --load-format safetensors", S, "model_executor/model_loader/__init__.py:48",
         engine(extraArgs=["--load-format", "safetensors"])),
    case("--mamba-block-size with prefix caching off", R, "config/vllm.py:1752 validate_mamba_block_size",
         gpu("A100-80GB", 2), model("Qwen3.5-27B"), engine(tensorParallelSize=2, enablePrefixCaching=False,
                                                          extraArgs=["--mamba-block-size", "256"]),
         codes=("mamba-block-size-needs-prefix-caching",)),
    # -- parsers ---------------------------------------------------------------------------------
    case("reasoning parser qwen (qwen3 is the name)", R, "entrypoints/openai/api_server.py:521",
         engine(reasoningParser="qwen"), codes=("reasoning-parser-unknown",)),
    case("tool parser qwen3 (qwen3_coder / qwen3_xml)", R, "entrypoints/openai/api_server.py:512",
         engine(enableAutoToolChoice=True, toolCallParser="qwen3"), codes=("tool-parser-unknown",)),
    case("--enable-auto-tool-choice without a parser", R, "entrypoints/openai/cli_args.py:363",
         engine(enableAutoToolChoice=True), codes=("auto-tool-choice-without-parser",)),
    case("twin: hermes with auto tool choice, qwen3 reasoning", S, "tool_parsers/__init__.py; reasoning/__init__.py",
         engine(enableAutoToolChoice=True, toolCallParser="hermes", reasoningParser="qwen3")),
    # -- environment variables -------------------------------------------------------------------
    case("VLLM_PP_LAYER_PARTITION 18,17 for 36 layers", R, ENVS, gpu("A100-80GB", 2),
         engine(pipelineParallelSize=2, env={"VLLM_PP_LAYER_PARTITION": "18,17"}), codes=("env-layer-partition",)),
    case("twin: VLLM_PP_LAYER_PARTITION 1,35", S, ENVS, gpu("A100-80GB", 2),
         engine(pipelineParallelSize=2, env={"VLLM_PP_LAYER_PARTITION": "1,35"})),
    case("VLLM_PP_LAYER_PARTITION with one stage for PP 2", R, ENVS, gpu("A100-80GB", 2),
         engine(pipelineParallelSize=2, env={"VLLM_PP_LAYER_PARTITION": "36"}), codes=("env-layer-partition",)),
    case("VLLM_WORKER_MULTIPROC_METHOD forkserver (spawn, fork)", R, f"{ENVS}; envs.py:752", engine(
        env={"VLLM_WORKER_MULTIPROC_METHOD": "forkserver"}), codes=("env-value-invalid",)),
    case("VLLM_ATTENTION_BACKEND is no longer read (a warning, not a forced backend)", S, "envs.py:1738 validate_environ",
         gpu("V100-32GB"), engine(dtype="half", env={"VLLM_ATTENTION_BACKEND": "FLASH_ATTN"})),
    # -- parallelism -------------------------------------------------------------------------------
    case("TP 3 does not divide 32 heads", R, PARALLEL, gpu("A100-80GB", 3), engine(tensorParallelSize=3),
         codes=("tp-heads-indivisible",)),
    case("TP 5 on Qwen3-14B: 8 KV heads neither split nor replicate", R, PARALLEL, gpu("A100-80GB", 5),
         model("Qwen3-14B"), engine(tensorParallelSize=5), codes=("tp-kv-heads-indivisible",)),
    case("twin: TP 16 replicates 8 KV heads twice", S, PARALLEL, gpu("A100-80GB", 16), engine(tensorParallelSize=16)),
    case("PP 3 over 36 layers (uneven is fine)", S, ENVS, gpu("A100-80GB", 3), engine(pipelineParallelSize=3)),
    case("expert parallelism on a dense model", R, "config/model.py:1058 _verify_with_expert_parallelism",
         gpu("A100-80GB", 2), engine(tensorParallelSize=2, extraArgs=["--enable-expert-parallel"]),
         codes=("extra-arg-expert-parallel-dense",)),
    # -- memory --------------------------------------------------------------------------------------
    case("gpuMemoryUtilization 1.0 (free memory is always below the total)", R, "v1/worker/utils.py:403 request_memory",
         engine(gpuMemoryUtilization=1.0), codes=("gpu-memory-utilization-unsatisfiable",)),
    case("twin: gpuMemoryUtilization 0.95", S, "v1/worker/utils.py:403", engine(gpuMemoryUtilization=0.95)),
    case("Qwen3-32B in bfloat16 on one A100 at 40960 tokens: no room for the KV cache", R,
         "v1/core/kv_cache_utils.py check_enough_kv_cache_memory", model("Qwen3-32B"), engine(maxModelLen=40960),
         codes=("kv-cache-too-small",)),
    case("twin: Qwen3-32B at TP 2", S, "v1/core/kv_cache_utils.py", gpu("A100-80GB", 2), model("Qwen3-32B"),
         engine(tensorParallelSize=2, maxModelLen=40960)),
    case("Qwen3-32B-AWQ on L40S: 4-bit weights fit", S, "quantization/awq_marlin.py create_weights (int32 packs 8)",
         gpu("L40S"), config=quantized(QWEN3_32B, "awq", torch_dtype="float16")),
    case("twin: Qwen3-32B in bfloat16 on L40S does not", R, "v1/worker/gpu_worker.py determine_available_memory",
         gpu("L40S"), model("Qwen3-32B"), codes=("weights-exceed-budget",)),
    case("Llama-3.1-70B compressed-tensors W4A16 on one H100", S,
         "compressed_tensors/schemes/compressed_tensors_wNa16.py create_weights (pack-quantized int32)",
         gpu("H100-80GB"), config=quantized(LLAMA_70B, "ct-w4a16")),
    case("Qwen3-32B bitsandbytes 4-bit on A100-40GB", S, "quantization/bitsandbytes.py:241 create_qweight_for_4bit",
         gpu("A100-40GB"), engine(maxModelLen=4096), config=quantized(QWEN3_32B, "bnb-4bit")),
    # -- the container ---------------------------------------------------------------------------
    case("container.runtime nvidai (Docker knows no such runtime)", R, "dockerd: unknown or invalid runtime name",
         {"container": {"runtime": "nvidai"}}, codes=("container-runtime-unknown",)),
]
