"""Names vLLM accepts, as data: parsers, environment variables, native architectures.

Taken from vLLM's source around v0.19: the registries in `vllm/tool_parsers/__init__.py`
(`vllm/entrypoints/openai/tool_parsers/` before the move) and `vllm/reasoning/__init__.py`,
and the variables in `vllm/envs.py`. The parser sets are the union over releases v0.12 to
mid-2026, so a name from a neighbouring release is not flagged; the rules using them only warn.
"""

from __future__ import annotations

# Tool-call parser -> the model family it parses (None: format shared by many families).
TOOL_PARSERS: dict[str, str | None] = {
    "apertus": "apertus", "cohere_command3": "cohere", "cohere_command4": "cohere",
    "deepseek_v3": "deepseek", "deepseek_v31": "deepseek", "deepseek_v32": "deepseek",
    "deepseek_v4": "deepseek", "ernie45": "ernie", "functiongemma": "gemma", "gemma4": "gemma",
    "gigachat3": "gigachat", "glm45": "glm", "glm47": "glm", "granite": "granite",
    "granite-20b-fc": "granite", "granite4": "granite", "hermes": None,
    "hunyuan_a13b": "hunyuan", "hy_v3": "hunyuan", "inkling": "inkling", "internlm": "internlm",
    "jamba": "jamba", "kimi_k2": "kimi", "kimi_k3": "kimi", "lfm2": "lfm", "llama3_json": "llama",
    "llama4_json": "llama", "llama4_pythonic": "llama", "longcat": "longcat", "mimo": "mimo",
    "minicpm5": "minicpm", "minimax": "minimax", "minimax_m2": "minimax", "minimax_m3": "minimax",
    "mistral": "mistral", "olmo3": "olmo", "openai": "gpt_oss", "phi4_mini_json": "phi",
    "poolside_v1": "poolside", "pythonic": None, "qwen3_coder": "qwen3", "qwen3_xml": "qwen3",
    "seed_oss": "seed_oss", "solar_open2": "solar", "step3": "step", "step3p5": "step",
    "step_deepresearch": "step", "xlam": None,
}

# Reasoning parser -> the model family whose thinking markup it parses.
REASONING_PARSERS: dict[str, str] = {
    "cohere_command3": "cohere", "cohere_command4": "cohere", "deepseek_r1": "deepseek",
    "deepseek_v3": "deepseek", "deepseek_v4": "deepseek", "ernie45": "ernie", "gemma4": "gemma",
    "glm45": "glm", "glm47": "glm", "granite": "granite", "holo2": "holo",
    "hunyuan_a13b": "hunyuan", "hy_v3": "hunyuan", "inkling": "inkling", "kimi_k2": "kimi",
    "kimi_k3": "kimi", "mimo": "mimo", "minimax_m2": "minimax", "minimax_m2_append_think": "minimax",
    "minimax_m3": "minimax", "mistral": "mistral", "nemotron_v3": "nemotron", "olmo3": "olmo",
    "openai_gptoss": "gpt_oss", "poolside_v1": "poolside", "qwen3": "qwen3", "seed_oss": "seed_oss",
    "solar_open2": "solar", "step3": "step", "step3p5": "step",
}

# Variables vLLM no longer reads -> what to do instead.
OBSOLETE_ENV: dict[str, str] = {
    "VLLM_USE_V1": "drop it: V0 was removed in v0.11 and the variable in Nov 2025 (vllm#28204); "
                   "V1 is the only engine",
    "VLLM_ATTENTION_BACKEND": "drop it and set engine.attentionBackend (--attention-backend)",
    "VLLM_USE_TRITON_FLASH_ATTN": "drop it: the ROCm-only switch was removed with the V0 backends",
}

# VLLM_* variables vLLM v0.19 reads (vllm/envs.py), platform-specific families as prefixes.
KNOWN_ENV_PREFIXES: tuple[str, ...] = (
    "VLLM_ROCM_", "VLLM_CPU_", "VLLM_XLA_", "VLLM_TPU_", "VLLM_XPU_", "VLLM_NIXL_",
    "VLLM_MOONCAKE_", "VLLM_MORIIO_", "VLLM_DEEPEP", "VLLM_RAY_", "VLLM_DP_", "VLLM_FLASHINFER_",
    "VLLM_USE_FLASHINFER_", "VLLM_USE_DEEP_GEMM", "VLLM_DEEP_GEMM_", "VLLM_ELASTIC_EP_",
    "VLLM_LORA_", "VLLM_LOGGING_", "VLLM_USE_RAY_", "VLLM_MARLIN_", "VLLM_TORCH_PROFILER_",
    "VLLM_PROFILER_", "VLLM_GPT_OSS_", "VLLM_WEIGHT_OFFLOADING_", "VLLM_MOE_",
    "VLLM_ALLREDUCE_", "VLLM_ENABLE_INDUCTOR_", "VLLM_NVFP4_", "VLLM_MXFP4_", "VLLM_CUDA_",
)
KNOWN_ENV: frozenset[str] = frozenset({
    "VLLM_HOST_IP", "VLLM_PORT", "VLLM_RPC_BASE_PATH", "VLLM_USE_MODELSCOPE",
    "VLLM_RINGBUFFER_WARNING_INTERVAL", "VLLM_NCCL_SO_PATH", "VLLM_ENGINE_ITERATION_TIMEOUT_S",
    "VLLM_ENGINE_READY_TIMEOUT_S", "VLLM_API_KEY", "VLLM_DEBUG_LOG_API_SERVER_RESPONSE",
    "VLLM_MODEL_REDIRECT_PATH", "VLLM_CACHE_ROOT", "VLLM_CONFIG_ROOT", "VLLM_USAGE_STATS_SERVER",
    "VLLM_NO_USAGE_STATS", "VLLM_DO_NOT_TRACK", "VLLM_USAGE_SOURCE", "VLLM_CONFIGURE_LOGGING",
    "VLLM_LOG_STATS_INTERVAL", "VLLM_TRACE_FUNCTION", "VLLM_PP_LAYER_PARTITION",
    "VLLM_WORKER_MULTIPROC_METHOD", "VLLM_ASSETS_CACHE", "VLLM_ASSETS_CACHE_MODEL_CLEAN",
    "VLLM_IMAGE_FETCH_TIMEOUT", "VLLM_VIDEO_FETCH_TIMEOUT", "VLLM_AUDIO_FETCH_TIMEOUT",
    "VLLM_MEDIA_URL_ALLOW_REDIRECTS", "VLLM_MEDIA_LOADING_THREAD_COUNT",
    "VLLM_MAX_AUDIO_CLIP_FILESIZE_MB", "VLLM_VIDEO_LOADER_BACKEND", "VLLM_MEDIA_CONNECTOR",
    "VLLM_MM_HASHER_ALGORITHM", "VLLM_TARGET_DEVICE", "VLLM_MAIN_CUDA_VERSION",
    "VLLM_FLOAT32_MATMUL_PRECISION", "VLLM_USE_PRECOMPILED", "VLLM_KEEP_ALIVE_ON_ENGINE_DEATH",
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN", "VLLM_RPC_TIMEOUT", "VLLM_HTTP_TIMEOUT_KEEP_ALIVE",
    "VLLM_PLUGINS", "VLLM_USE_AOT_COMPILE", "VLLM_USE_BYTECODE_HOOK", "VLLM_FORCE_AOT_LOAD",
    "VLLM_USE_MEGA_AOT_ARTIFACT", "VLLM_USE_TRITON_AWQ", "VLLM_ALLOW_RUNTIME_LORA_UPDATING",
    "VLLM_SKIP_P2P_CHECK", "VLLM_DISABLED_KERNELS", "VLLM_ENABLE_FLA_PACKED_RECURRENT_DECODE",
    "VLLM_DISABLE_PYNCCL", "VLLM_USE_OINK_OPS", "VLLM_ENABLE_V1_MULTIPROCESSING",
    "VLLM_LOG_BATCHSIZE_INTERVAL", "VLLM_DISABLE_COMPILE_CACHE", "VLLM_SERVER_DEV_MODE",
    "VLLM_V1_OUTPUT_PROC_CHUNK_SIZE", "VLLM_MLA_DISABLE", "VLLM_CUDART_SO_PATH",
    "VLLM_USE_STANDALONE_COMPILE", "VLLM_ENABLE_PREGRAD_PASSES", "VLLM_ENABLE_MOE_DP_CHUNK",
    "VLLM_RANDOMIZE_DP_DUMMY_INPUTS", "VLLM_V1_USE_OUTLINES_CACHE", "VLLM_USE_FUSED_MOE_GROUPED_TOPK",
    "VLLM_BLOCKSCALE_FP8_GEMM_FLASHINFER", "VLLM_XGRAMMAR_CACHE_MB", "VLLM_MSGPACK_ZERO_COPY_THRESHOLD",
    "VLLM_ALLOW_INSECURE_SERIALIZATION", "VLLM_DISABLE_REQUEST_ID_RANDOMIZATION",
    "VLLM_MAX_TOKENS_PER_EXPERT_FP4_MOE", "VLLM_TOOL_PARSE_REGEX_TIMEOUT_SECONDS",
    "VLLM_MQ_MAX_CHUNK_BYTES_MB", "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS", "VLLM_KV_CACHE_LAYOUT",
    "VLLM_COMPUTE_NANS_IN_LOGITS", "VLLM_USE_NVFP4_CT_EMULATIONS", "VLLM_ENABLE_CUDAGRAPH_GC",
    "VLLM_LOOPBACK_IP", "VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE",
    "VLLM_ENABLE_RESPONSES_API_STORE", "VLLM_HAS_FLASHINFER_CUBIN", "VLLM_TUNED_CONFIG_FOLDER",
    "VLLM_USE_EXPERIMENTAL_PARSER_CONTEXT", "VLLM_SYSTEM_START_DATE",
    "VLLM_TOOL_JSON_ERROR_AUTOMATIC_RETRY", "VLLM_CUSTOM_SCOPES_FOR_PROFILING",
    "VLLM_NVTX_SCOPES_FOR_PROFILING", "VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES",
    "VLLM_OBJECT_STORAGE_SHM_BUFFER_NAME", "VLLM_DBO_COMM_SMS", "VLLM_PATTERN_MATCH_DEBUG",
    "VLLM_DEBUG_DUMP_PATH", "VLLM_USE_NCCL_SYMM_MEM", "VLLM_NCCL_INCLUDE_PATH", "VLLM_USE_FBGEMM",
    "VLLM_GC_DEBUG", "VLLM_DEBUG_WORKSPACE", "VLLM_DISABLE_SHARED_EXPERTS_STREAM",
    "VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD", "VLLM_COMPILE_CACHE_SAVE_FORMAT",
    "VLLM_USE_V2_MODEL_RUNNER", "VLLM_LOG_MODEL_INSPECTION", "VLLM_DEBUG_MFU_METRICS",
    "VLLM_DISABLE_LOG_LOGO", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "VLLM_USE_FLASHINFER_SAMPLER",
    "VLLM_FUSED_MOE_CHUNK_SIZE", "VLLM_ENABLE_FUSED_MOE_ACTIVATION_CHUNKING", "VLLM_SLEEP_WHEN_IDLE",
    "VLLM_ALL2ALL_BACKEND", "VLLM_USE_CUDNN_PREFILL", "VLLM_NO_DEPRECATION_WARNING",
    "VLLM_SKIP_PRECOMPILED_VERSION_SUFFIX", "VLLM_DOCKER_BUILD_CONTEXT", "VLLM_PRECOMPILED_WHEEL_LOCATION",
    "VLLM_LOGITS_PROCESSOR_THREADS", "VLLM_MM_INPUT_CACHE_GIB", "VLLM_FLASH_ATTN_VERSION",
})

# Architectures vLLM implements itself (vllm/model_executor/models/registry.py), the common ones.
NATIVE_ARCHITECTURES: frozenset[str] = frozenset({
    "LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM", "Mistral3ForConditionalGeneration",
    "Qwen2ForCausalLM", "Qwen2MoeForCausalLM", "Qwen2VLForConditionalGeneration",
    "Qwen2_5_VLForConditionalGeneration", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM",
    "Qwen3NextForCausalLM", "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration",
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration",
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "GptOssForCausalLM", "Glm4ForCausalLM",
    "Glm4MoeForCausalLM", "Phi3ForCausalLM", "MiniMaxM2ForCausalLM", "KimiK2ForCausalLM",
})
