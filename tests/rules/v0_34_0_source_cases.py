# ruff: noqa: E501 - one case a line or two: its id, verdict and the source lines that decide it read together
"""Stacks as users write them, each with the decision vLLM v0.34.0 makes at start-up, read from
its source (paths under `vllm/` of the v0.34.0 wheel, line numbers of that release).

Written from vLLM's source, not from the rules, and aimed at what changed since v0.19.1 (the
v0_19_1 set): FlashInfer's floor rose to CC 8.0 (T4 now lands on Triton), FlashAttention 4 holds
an FP8 KV cache on Blackwell and serves multimodal-prefix attention, FlashInfer serves sinks on
Hopper (XQA decode), FlexAttention takes only multiples of 16 as its block, YaRN no longer
stretches `max_position_embeddings`, AWQ/GPTQ became AutoAWQ/AutoGPTQ (half and bfloat16),
bitsandbytes left the wheel, ModelOpt FP8 runs from CC 8.0, FP8 MoE block scales are refined
(not refused) for a TP split that leaves >= 32-wide blocks, the B200's 160 GiB tier doubles the
batch defaults, and `--async-scheduling` no longer refuses speculative decoding. Each changed
verdict sits beside a case that is decided as before, and most refusals beside a twin that starts.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.rules.v0_19_1_source_cases import BASE as V0_19_1_BASE
from tests.rules.v0_19_1_source_cases import (
    DSV2_LITE,
    GEMMA3_1B,
    PHI3_MINI,
    QWEN3_4B,
    QWEN3_8B,
    Case,
    case,
    engine,
    gpu,
    model,
    quantized,
    spec,
)

BASE: dict[str, Any] = {**V0_19_1_BASE, "image": {**V0_19_1_BASE["image"], "tag": "v0.34.0"}}

R, S = "refuses", "starts"


def wrong(reason: str) -> tuple[Any, ...]:
    """A case the rules still decide wrongly: strict, so fixing the rule turns it red until unmarked."""
    return (pytest.mark.xfail(strict=True, reason=reason),)


# the sources, by class (v0.34.0 line numbers) ---------------------------------------------------
SELECT = ("platforms/cuda.py:461 get_attn_backend_cls (a forced backend: raise at 482); :81 _get_backend_priorities "
          "(:157 SM10x FlashInfer first, :166 otherwise FlashAttention first; :169 TRITON_FLASH_ATTN first on 9.x with "
          "mm_prefix); :512 no valid backend; v1/attention/backend.py:282 validate_configuration")
FA = ("v1/attention/backends/flash_attn.py:289 dtypes, :290 KV dtypes (no fp8_e5m2), :425 head sizes, :438 "
      "supports_kv_cache_dtype, :448 supports_mm_prefix = FA4, :452 supports_sink, :458 CC 8.0+, :462 supports_combination "
      "(:486 sinks below 9.0, :489 SM90 FP8 KV with mm_prefix, :505 mm_prefix needs FA version 4); fa_utils.py:74 "
      "get_flash_attn_version (:99 FA3 on 9.x, :102 FA4 on 10.x, else FA2), :282 flash_attn_supports_kv_cache_dtype "
      "(:306 SM90 FA3 or SM100 FA4), :319 sinks on FA3/FA4; vllm_flash_attn/flash_attn_interface.py:72 FA4 on 9.x-11.x")
FI = ("v1/attention/backends/flashinfer.py:574 dtypes, :575 KV dtypes, :587 block sizes 16/32/64, :693 head sizes "
      "64/128/256/512, :698 CC 8.0-12.1 (SM75 switched off), :709 supports_sink (9.0 and 12.x: XQA decode; "
      "utils/flashinfer.py:716 supports_trtllm_attention)")
TRITON = ("v1/attention/backends/triton_attn.py:321 dtypes incl. float32, :326 KV dtypes, :339 MultipleOf(16), :379 "
          "head size >= 32, :383 mm_prefix, :387 sinks, :545 self.fp8_dtype = current_platform.fp8_dtype(), :665 "
          "cache.view(fp8_dtype)")
TRITON_FP8 = TRITON + "; Triton compiles float8_e4m3fn (fp8e4nv) only from sm_89"
FLEX = "v1/attention/backends/flex_attention.py:91 dtypes, :96 KV dtypes (no fp8), :136 mm_prefix, :153 MultipleOf(16); backend.py:125 supports_block_size"
MM_PREFIX = "config/model.py is_mm_prefix_lm (gemma3); model_executor/layers/attention/attention.py use_mm_prefix"
SINKS = "gpt-oss passes sinks= to its attention layers (has_sink)"
DTYPE = "config/model.py:2442 _FLOAT16_NOT_SUPPORTED_MODELS, :2457 _check_valid_dtype, :2467 _resolve_auto_dtype; platforms/cuda.py:679 check_if_supports_dtype"
QUANT_CFG = "config/vllm.py:880 _get_quantization_config (min capability :892, act dtypes :899)"
VERIFY_Q = "config/model.py:1403 _verify_quantization (overrides :1416, mismatch :1476, unknown :1485)"
AUTO_AWQ = "model_executor/layers/quantization/__init__.py:150 awq/awq_marlin -> AutoAWQConfig; auto_awq.py:231 half and bfloat16, :235 CC 7.5, :265 override"
FP8_LINEAR = "model_executor/layers/quantization/fp8.py:307 validate_fp8_block_shape; utils/fp8_utils.py:1296 (row parallel :1319); layers/linear.py:565 (merged column layers only)"
FP8_MOE = ("model_executor/layers/quantization/fp8.py:496 resolve_fp8_moe_weight_block_shape, :553 validate only when not refined; "
           "fused_moe/oracle/fp8.py:298 refine_fp8_moe_block_shape (gcd >= 32); utils/fp8_utils.py:1346 validate_fp8_block_shape_moe")
MAX_LEN = ("config/model.py:2589 _get_and_verify_max_len (:2653 YaRN, llama3, longrope leave max_position_embeddings "
           "unscaled: 'already scaled', :2665 other types multiply by factor, :2724 raise)")
SCHED = "engine/arg_utils.py:2977 get_batch_defaults (:3010 >= 160 GiB: 16384 tokens, :3020 >= 70 GiB not A100: 8192, else 2048), :3188 (:3221 throughput x2); config/scheduler.py:375"
SPEC_CFG = "config/speculative.py:1349 __post_init__, :1646 _verify_args"
ENVS = "envs.py:989 env_with_choices; distributed/utils.py:211 get_pp_indices (:233 stages, :235 sum)"
PARSERS = "entrypoints/common/cli_args.py:540 validate_parsed_serve_args (:563), :624 validate_api_server_args; tool_parsers/__init__.py:89, :210-222; reasoning/__init__.py:168"
PARALLEL = "config/model.py:1565 verify_with_parallel_config (:1579 heads)"

CASES: list[Case] = [
    # -- FlashInfer's floor is CC 8.0: a T4 lands on Triton --------------------------------------------
    case("FLASHINFER forced on T4 (FlashInfer now 8.0-12.1)", R, f"{SELECT}; {FI}", gpu("T4"), model("Qwen3-4B"),
         engine(attentionBackend="FLASHINFER"), codes=("attention-backend-unsupported",)),
    case("twin: T4, auto (Triton)", S, f"{SELECT}; {TRITON}", gpu("T4"), model("Qwen3-4B")),
    case("fp8 KV on T4, auto: FlashAttention and FlashInfer need 8.0, Triton stores e4m3fn", R, f"{SELECT}; {FI}; {TRITON_FP8}",
         gpu("T4"), model("Qwen3-4B"), engine(kvCacheDtype="fp8"), codes=("fp8-kv-cache-unsupported",)),
    case("twin: fp8 KV on L40S (Triton at 8.9, FlashInfer first anyway)", S, f"{FI}; {TRITON_FP8}", gpu("L40S"),
         engine(kvCacheDtype="fp8")),
    case("fp8 KV on V100 (Triton)", R, TRITON_FP8, gpu("V100-32GB"), engine(dtype="half", kvCacheDtype="fp8"),
         codes=("fp8-kv-cache-unsupported",)),
    case("FLASHINFER on A100 (8.0)", S, FI, engine(attentionBackend="FLASHINFER")),
    # -- FP8 KV cache and FlashAttention 3/4 -------------------------------------------------------------
    case("fp8 KV with FLASH_ATTN on B200: FA4 holds an FP8 cache now", S, FA, gpu("B200"),
         engine(kvCacheDtype="fp8", attentionBackend="FLASH_ATTN")),
    case("fp8 KV with FLASH_ATTN on A100 (FA2)", R, FA, engine(kvCacheDtype="fp8", attentionBackend="FLASH_ATTN"),
         codes=("fp8-kv-cache-backend", "attention-backend-unsupported")),
    case("fp8 KV on A100, auto: FlashInfer", S, f"{FA}; {FI}", engine(kvCacheDtype="fp8")),
    case("fp8_e5m2 KV on H100, auto: FlashAttention refuses e5m2 at selection, FlashInfer takes it", S, f"{SELECT}; {FA}; {FI}",
         gpu("H100-80GB"), engine(kvCacheDtype="fp8_e5m2")),
    case("fp8_e5m2 KV with FLASH_ATTN forced on H100", R, FA, gpu("H100-80GB"),
         engine(kvCacheDtype="fp8_e5m2", attentionBackend="FLASH_ATTN"), codes=("fp8-kv-cache-backend", "fp8-kv-cache-unsupported", "attention-backend-unsupported")),
    case("twin: fp8_e4m3 KV with FLASH_ATTN on H100 (FA3)", S, FA, gpu("H100-80GB"),
         engine(kvCacheDtype="fp8_e4m3", attentionBackend="FLASH_ATTN")),
    case("FLEX_ATTENTION forced with an fp8 KV cache", R, FLEX, engine(kvCacheDtype="fp8", attentionBackend="FLEX_ATTENTION"),
         codes=("fp8-kv-cache-backend",)),
    case("fp8 KV, head size 96 (Phi-3-mini) on A100: Triton", R, f"{FA}; {FI}; {TRITON_FP8}",
         engine(kvCacheDtype="fp8", maxModelLen=4096), config=(PHI3_MINI, {}), codes=("fp8-kv-cache-unsupported",)),
    case("twin: fp8 KV, head size 96 on L40S", S, TRITON_FP8, gpu("L40S"), engine(kvCacheDtype="fp8", maxModelLen=4096),
         config=(PHI3_MINI, {})),
    # -- sinks (gpt-oss) ---------------------------------------------------------------------------
    case("gpt-oss sinks, FLASHINFER on H100: XQA decode serves sinks on 9.0 now", S, f"{SELECT}; {FI}; {SINKS}",
         gpu("H100-80GB"), model("gpt-oss-20b"), engine(attentionBackend="FLASHINFER")),
    case("gpt-oss sinks, FLASHINFER on A100", R, f"{FI}; {SINKS}", model("gpt-oss-20b"),
         engine(attentionBackend="FLASHINFER"), codes=("attention-backend-unsupported",)),
    case("gpt-oss sinks, FLASH_ATTN on A100 (FA2)", R, f"{FA}; {SINKS}", model("gpt-oss-20b"),
         engine(attentionBackend="FLASH_ATTN"), codes=("attention-backend-unsupported",)),
    case("twin: gpt-oss sinks, FLASH_ATTN on B200 (FA4)", S, FA, gpu("B200"), model("gpt-oss-20b"),
         engine(attentionBackend="FLASH_ATTN")),
    case("gpt-oss on A100, auto: Triton", S, f"{SELECT}; {TRITON}", model("gpt-oss-20b")),
    case("fp8 KV, gpt-oss on A100: sinks leave Triton", R, f"{FA}; {FI}; {TRITON_FP8}", model("gpt-oss-20b"),
         engine(kvCacheDtype="fp8"), codes=("fp8-kv-cache-unsupported",)),
    case("gpt-oss sinks, FLEX_ATTENTION (no supports_sink)", R, f"{FLEX}; v1/attention/backend.py:322",
         model("gpt-oss-20b"), engine(attentionBackend="FLEX_ATTENTION"), codes=("attention-backend-unsupported",)),
    # -- multimodal prefix (Gemma 3) -----------------------------------------------------------------------
    case("Gemma 3, FLASH_ATTN on B200: FA4 serves the multimodal prefix", S, f"{FA}; {MM_PREFIX}", gpu("B200"),
         model("gemma-3-27b-it"), engine(attentionBackend="FLASH_ATTN")),
    case("Gemma 3, FLASH_ATTN on H100: FA3 is picked, mm_prefix needs version 4", R, f"{FA}; {MM_PREFIX}",
         gpu("H100-80GB"), model("gemma-3-27b-it"), engine(attentionBackend="FLASH_ATTN"),
         codes=("attention-backend-unsupported",)),
    case("Gemma 3, FLASH_ATTN on A100 (no FA4 on 8.0)", R, f"{FA}; {MM_PREFIX}", model("gemma-3-27b-it"),
         engine(attentionBackend="FLASH_ATTN"), codes=("attention-backend-unsupported",)),
    case("Gemma 3, FLASHINFER (no mm_prefix)", R, f"{FI}; backend.py:181; {MM_PREFIX}", model("gemma-3-27b-it"),
         engine(attentionBackend="FLASHINFER"), codes=("attention-backend-unsupported",)),
    case("twin: Gemma 3, TRITON_ATTN", S, TRITON, model("gemma-3-27b-it"), engine(attentionBackend="TRITON_ATTN")),
    case("Gemma 3 on H100, auto: TRITON_FLASH_ATTN composite", S, f"{SELECT}; v1/attention/backends/triton_flash_attn.py:21",
         gpu("H100-80GB"), model("gemma-3-27b-it")),
    case("fp8 KV, Gemma 3 on A100: multimodal prefix leaves Triton", R, f"{MM_PREFIX}; {TRITON_FP8}", model("gemma-3-27b-it"),
         engine(kvCacheDtype="fp8"), codes=("fp8-kv-cache-unsupported",)),
    case("twin: fp8 KV, Gemma 3 on H100 (FA refuses SM90 FP8 with mm_prefix, Triton at 9.0)", S, f"{FA}; {TRITON_FP8}",
         gpu("H100-80GB"), model("gemma-3-27b-it"), engine(kvCacheDtype="fp8")),
    case("text-only Gemma 3 (gemma3_text): FLASHINFER", S, MM_PREFIX, engine(attentionBackend="FLASHINFER"),
         config=(GEMMA3_1B, {})),
    # -- dtype, head size, block size ----------------------------------------------------------------
    case("float32 on FLASHINFER", R, f"{SELECT}; {FI}", engine(dtype="float32", attentionBackend="FLASHINFER"),
         codes=("attention-backend-unsupported",)),
    case("twin: float32, auto (Triton)", S, TRITON, engine(dtype="float32")),
    case("FLASH_ATTN on V100 (CC 8.0+)", R, FA, gpu("V100-32GB"), engine(dtype="half", attentionBackend="FLASH_ATTN"),
         codes=("attention-backend-unsupported",)),
    case("head size 96 (Phi-3-mini) on FLASHINFER", R, FI, engine(attentionBackend="FLASHINFER", maxModelLen=4096),
         config=(PHI3_MINI, {}), codes=("attention-backend-unsupported",)),
    case("twin: head size 96, auto (FlashAttention takes multiples of 8)", S, FA, engine(maxModelLen=4096),
         config=(PHI3_MINI, {})),
    case("--block-size 8, auto on A100: every backend now wants 16 (FlexAttention too)", R,
         f"{SELECT}; v1/attention/selector.py:135 (user block size); flash_attn.py:357, {FI}; {TRITON}; {FLEX}; turboquant_attn.py:184",
         engine(extraArgs=["--block-size", "8"]), codes=("attention-backend-unsupported", "attention-no-backend")),
    case("twin: --block-size 16, auto", S, f"{SELECT}; flash_attn.py:357", engine(extraArgs=["--block-size", "16"])),
    case("--block-size 8 with FLASHINFER (16, 32, 64)", R, FI, engine(attentionBackend="FLASHINFER", extraArgs=["--block-size", "8"]),
         codes=("attention-backend-unsupported",)),
    case("twin: --block-size 32 with FLASHINFER", S, FI, engine(attentionBackend="FLASHINFER", extraArgs=["--block-size", "32"])),
    case("MLA, FLASHINFER (not an MLA backend)", R, f"{SELECT}; backend.py:317 (MLA not supported)",
         engine(attentionBackend="FLASHINFER"), config=(DSV2_LITE, {}), codes=("model-mla-attention-backend",)),
    case("bfloat16 on V100", R, DTYPE, gpu("V100-32GB"), engine(dtype="bfloat16"), codes=("dtype-bf16-unsupported",)),
    case("Gemma 3 in float16 on V100", R, DTYPE, gpu("V100-32GB", 2), model("gemma-3-12b-it"),
         engine(tensorParallelSize=2, dtype="half"), codes=("dtype-fp16-refused",)),
    case("gemma3_text in float16 on T4", R, DTYPE, gpu("T4"), engine(dtype="half"), config=(GEMMA3_1B, {}),
         codes=("dtype-fp16-refused",)),
    # -- quantization -----------------------------------------------------------------------------------
    case("AWQ forced awq in bfloat16: AutoAWQ takes half and bfloat16 now", S, f"{VERIFY_Q}; {QUANT_CFG}; {AUTO_AWQ}",
         engine(quantization="awq", dtype="bfloat16"), config=quantized(QWEN3_8B, "awq", torch_dtype="float16")),
    case("AWQ on V100 (AutoAWQ 7.5)", R, f"{QUANT_CFG}; {AUTO_AWQ}", gpu("V100-32GB"), engine(dtype="half"),
         config=quantized(QWEN3_8B, "awq", torch_dtype="float16"), codes=("quantization-cc-too-low",)),
    case("twin: AWQ on T4", S, AUTO_AWQ, gpu("T4"), config=quantized(QWEN3_8B, "awq", torch_dtype="float16")),
    case("AWQ in float32", R, f"{QUANT_CFG}; {AUTO_AWQ}", engine(dtype="float32"),
         config=quantized(QWEN3_8B, "awq", torch_dtype="float16"), codes=("quantization-dtype-unsupported",)),
    case("GPTQ on T4 (AutoGPTQ 6.0)", S, f"{VERIFY_Q}; quantization/auto_gptq.py:186, :190, :222", gpu("T4"),
         config=quantized(QWEN3_8B, "gptq", torch_dtype="float16")),
    case("bitsandbytes checkpoint: the method left the wheel", R,
         f"{VERIFY_Q}; model_executor/layers/quantization/__init__.py:13 QuantizationMethods (no bitsandbytes)",
         engine(maxModelLen=4096), config=quantized(QWEN3_8B, "bnb-4bit"), codes=("quantization-checkpoint-dropped",)),
    case("ModelOpt FP8 on A100: 8.0 now", S, f"{QUANT_CFG}; quantization/modelopt.py:416 ModelOptFp8Config, :453",
         config=quantized(QWEN3_8B, "modelopt-fp8")),
    case("ModelOpt FP8 on T4", R, f"{QUANT_CFG}; quantization/modelopt.py:453", gpu("T4"),
         config=quantized(QWEN3_8B, "modelopt-fp8"), codes=("quantization-cc-too-low",)),
    case("mxfp4 (gpt-oss) in float16", R, f"{QUANT_CFG}; quantization/mxfp4.py:80, :117 GptOssMxfp4Config",
         model("gpt-oss-20b"), engine(dtype="half"), codes=("quantization-dtype-unsupported",)),
    case("mxfp4 on T4 (CC 8.0+)", R, f"{QUANT_CFG}; quantization/mxfp4.py:72", gpu("T4"), model("gpt-oss-20b"),
         codes=("quantization-cc-too-low",)),
    case("FP8 checkpoint in float32", R, f"{QUANT_CFG}; quantization/fp8.py:139", model("Qwen3-32B-FP8"),
         engine(dtype="float32"), codes=("quantization-dtype-unsupported",)),
    # -- FP8 block quantization and the tensor-parallel split ---------------------------------------------
    case("Qwen3-4B-FP8 at TP 8: down_proj 9728 / 8 = 1216 rows, not whole 128-blocks", R, FP8_LINEAR, gpu("A100-80GB", 8),
         engine(tensorParallelSize=8), config=quantized(QWEN3_4B, "fp8-block"), codes=("fp8-block-linear-split",)),
    case("twin: Qwen3-4B-FP8 at TP 4", S, FP8_LINEAR, gpu("A100-80GB", 4), engine(tensorParallelSize=4),
         config=quantized(QWEN3_4B, "fp8-block")),
    case("Qwen3-30B-A3B-FP8 at TP 4: experts 768 / 4 = 192, scales refined to 64-blocks", S, FP8_MOE, gpu("A100-80GB", 4),
         model("Qwen3-30B-A3B-FP8"), engine(tensorParallelSize=4)),
    case("Qwen3-235B-A22B-FP8 at TP 8: 1536 / 8 = 192, refined to 64", S, FP8_MOE, gpu("H100-80GB", 8),
         model("Qwen3-235B-A22B-FP8"), engine(tensorParallelSize=8)),
    case("Qwen3-30B-A3B-FP8 at TP 16: 768 / 16 = 48, gcd 16 < 32 cannot refine", R, f"{FP8_MOE}; {PARALLEL}",
         gpu("A100-80GB", 16), model("Qwen3-30B-A3B-FP8"), engine(tensorParallelSize=16), codes=("fp8-block-moe-split",)),
    # -- context length and RoPE ----------------------------------------------------------------------
    case("YaRN x4 in the configFile no longer stretches 40960 to 131072", R, MAX_LEN, engine(maxModelLen=131072),
         config=(QWEN3_8B, {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}),
         codes=("max-model-len-exceeds-model",)),
    case("twin: YaRN with max_position_embeddings 131072 (already scaled, as v0.34 reads it)", S, MAX_LEN,
         engine(maxModelLen=131072), config=(QWEN3_8B, {"max_position_embeddings": 131072, "rope_scaling": {
             "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})),
    case("YaRN x4 from --hf-overrides: 131072 refused", R, MAX_LEN, engine(maxModelLen=131072, extraArgs=[
        "--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}']),
         codes=("max-model-len-exceeds-model",)),
    case("twin: YaRN from --hf-overrides at 40960", S, MAX_LEN, engine(maxModelLen=40960, extraArgs=[
        "--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}'])),
    case("Llama 3.1: llama3 RoPE, 131072", S, MAX_LEN, model("Llama-3.1-8B"), engine(maxModelLen=131072)),
    case("maxModelLen above max_position_embeddings", R, MAX_LEN, engine(maxModelLen=65536), codes=("max-model-len-exceeds-model",)),
    case("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", S, f"{MAX_LEN} (:2719)", engine(maxModelLen=65536, env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"})),
    # -- the scheduler's batch limits ---------------------------------------------------------------------
    case("maxNumSeqs 4096 on A100 (2048 tokens default)", R, SCHED, engine(maxNumSeqs=4096),
         codes=("max-num-batched-tokens-below-max-num-seqs",)),
    case("maxNumSeqs 16384 on B200 (>= 160 GiB: 16384 tokens)", S, SCHED, gpu("B200"), engine(maxNumSeqs=16384)),
    case("maxNumSeqs 16385 on B200", R, SCHED, gpu("B200"), engine(maxNumSeqs=16385),
         codes=("max-num-batched-tokens-below-max-num-seqs",)),
    case("maxNumSeqs 8193 on H100 (8192)", R, SCHED, gpu("H100-80GB"), engine(maxNumSeqs=8193),
         codes=("max-num-batched-tokens-below-max-num-seqs",)),
    case("maxNumSeqs 4096 on A100 with --performance-mode throughput (x2)", S, SCHED,
         engine(maxNumSeqs=4096, extraArgs=["--performance-mode", "throughput"])),
    # -- speculative decoding ---------------------------------------------------------------------------
    case("--async-scheduling with ngram: no longer refused", S, f"{SPEC_CFG}; config/vllm.py:1598 (only the executor and ROCm DBO)",
         engine(extraArgs=["--async-scheduling"], speculativeConfig=spec("ngram", 3))),
    # -- parsers, environment, parallelism, memory -----------------------------------------------------------
    case("reasoning parser qwen (qwen3 is the name)", R, PARSERS, engine(reasoningParser="qwen"), codes=("reasoning-parser-unknown",)),
    case("tool parser qwen3", R, PARSERS, engine(enableAutoToolChoice=True, toolCallParser="qwen3"), codes=("tool-parser-unknown",)),
    case("twin: tool parser qwen3_json (new), reasoning qwen3", S, PARSERS,
         engine(enableAutoToolChoice=True, toolCallParser="qwen3_json", reasoningParser="qwen3")),
    case("--enable-auto-tool-choice without a parser", R, PARSERS, engine(enableAutoToolChoice=True),
         codes=("auto-tool-choice-without-parser",)),
    case("VLLM_PP_LAYER_PARTITION 18,17 for 36 layers", R, ENVS, gpu("A100-80GB", 2),
         engine(pipelineParallelSize=2, env={"VLLM_PP_LAYER_PARTITION": "18,17"}), codes=("env-layer-partition",)),
    case("twin: VLLM_PP_LAYER_PARTITION 18,18", S, ENVS, gpu("A100-80GB", 2),
         engine(pipelineParallelSize=2, env={"VLLM_PP_LAYER_PARTITION": "18,18"})),
    case("VLLM_WORKER_MULTIPROC_METHOD forkserver (spawn, fork)", R, ENVS, engine(env={"VLLM_WORKER_MULTIPROC_METHOD": "forkserver"}),
         codes=("env-value-invalid",)),
    case("TP 3 does not divide 32 heads", R, PARALLEL, gpu("A100-80GB", 3), engine(tensorParallelSize=3),
         codes=("tp-heads-indivisible",)),
    case("gpuMemoryUtilization 1.0", R, "v1/worker/utils.py:734 request_memory (:760 free < requested)",
         engine(gpuMemoryUtilization=1.0), codes=("gpu-memory-utilization-unsatisfiable",)),
    case("twin: gpuMemoryUtilization 0.95", S, "v1/worker/utils.py:734", engine(gpuMemoryUtilization=0.95)),
]
