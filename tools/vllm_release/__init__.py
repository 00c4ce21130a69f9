"""Generator of the vLLM release registry (vllm_serving/engine/releases/); see README.md."""
