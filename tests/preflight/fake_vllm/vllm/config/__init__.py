from vllm.config.vllm import get_current_vllm_config, set_current_vllm_config

__all__ = ["get_current_vllm_config", "set_current_vllm_config"]
