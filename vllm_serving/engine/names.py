"""What this project knows about vLLM's names beyond a release's own registry.

Which names a release accepts (parsers, environment variables, quantization and speculative
methods) is in its registry (`engine/release_registry.py`, generated from the wheel). Here:
which model family each parser is written for, what to do about variables vLLM dropped, and
the architectures vLLM implements itself.
"""

from __future__ import annotations

# Tool-call parser -> the model family whose markup it parses (None: a format many families
# emit). Named after the parser's module in vllm/tool_parsers/ (v0.19.1 and neighbours); a
# parser absent here has no known family and is never reported as another family's.
TOOL_PARSER_FAMILY: dict[str, str | None] = {
    "apertus": "apertus", "cohere_command3": "cohere", "cohere_command4": "cohere",
    "deepseek_v3": "deepseek", "deepseek_v31": "deepseek", "deepseek_v32": "deepseek",
    "deepseek_v4": "deepseek", "ernie45": "ernie", "functiongemma": "gemma", "gemma4": "gemma",
    "gigachat3": "gigachat", "glm45": "glm", "glm47": "glm", "granite": "granite",
    "granite-20b-fc": "granite", "granite4": "granite", "hermes": None,
    "hunyuan_a13b": "hunyuan", "hy_v3": "hunyuan", "internlm": "internlm", "jamba": "jamba", "kimi_k2": "kimi",
    "lfm2": "lfm", "llama3_json": "llama", "llama4_json": "llama", "llama4_pythonic": "llama",
    "longcat": "longcat", "mimo": "mimo", "minimax": "minimax", "minimax_m2": "minimax",
    "mistral": "mistral", "olmo3": "olmo", "openai": "gpt_oss", "phi4_mini_json": "phi",
    "pythonic": None, "qwen3_coder": "qwen3", "qwen3_xml": "qwen3", "seed_oss": "seed_oss",
    "step3": "step", "step3p5": "step", "xlam": None,
}

# Reasoning parser -> the model family whose thinking markup it parses (vllm/reasoning/).
REASONING_PARSER_FAMILY: dict[str, str] = {
    "cohere_command3": "cohere", "cohere_command4": "cohere", "deepseek_r1": "deepseek",
    "deepseek_v3": "deepseek", "deepseek_v4": "deepseek", "ernie45": "ernie", "gemma4": "gemma",
    "glm45": "glm", "glm47": "glm", "granite": "granite", "holo2": "holo",
    "hunyuan_a13b": "hunyuan", "hy_v3": "hunyuan", "kimi_k2": "kimi", "mimo": "mimo", "minimax_m2": "minimax",
    "minimax_m2_append_think": "minimax", "mistral": "mistral", "nemotron_v3": "nemotron",
    "olmo3": "olmo", "openai_gptoss": "gpt_oss", "qwen3": "qwen3", "seed_oss": "seed_oss",
    "step3": "step", "step3p5": "step",
}

# Variables vLLM no longer reads -> what to do instead (none is in v0.19.1's vllm/envs.py).
OBSOLETE_ENV: dict[str, str] = {
    "VLLM_USE_V1": "drop it: V0 was removed in v0.11 and the variable in Nov 2025 (vllm#28204); "
                   "V1 is the only engine",
    "VLLM_ATTENTION_BACKEND": "drop it and set engine.attentionBackend (--attention-backend)",
    "VLLM_USE_TRITON_FLASH_ATTN": "drop it: the ROCm-only switch was removed with the V0 backends",
}

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
