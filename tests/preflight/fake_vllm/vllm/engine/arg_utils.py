"""EngineArgs and AsyncEngineArgs (vllm/engine/arg_utils.py): from_cli_args, and
create_engine_config reading the weights' config.json.

Test knob: FAKE_VLLM_CONFIG_FILE, where create_engine_config records how it was called (headless,
the API-server count and rank `run_multi_api_server` sets)."""

import json
import os

from vllm.config.vllm import CacheConfig, VllmConfig, attention_config, model_config


class EngineArgs:
    _api_process_count = 1  # ParallelConfig's defaults (vllm/config/parallel.py)
    _api_process_rank = 0

    def __init__(self, **values):
        self.values = values

    @classmethod
    def from_cli_args(cls, args):
        return cls(**vars(args))

    def create_engine_config(self, usage_context=None, headless=False):
        v = self.values
        record = os.environ.get("FAKE_VLLM_CONFIG_FILE")
        if record:
            with open(record, "w", encoding="utf-8") as f:
                json.dump({"headless": headless, "api_process_count": self._api_process_count,
                           "api_process_rank": self._api_process_rank}, f)
        # vllm/config/vllm.py VllmConfig.__post_init__ (the model is multimodal)
        if v.get("mm_tensor_ipc") == "torch_shm" and os.environ.get("VLLM_WORKER_MULTIPROC_METHOD") != "spawn":
            raise ValueError("torch_shm is known to fail without VLLM_WORKER_MULTIPROC_METHOD set to spawn")
        with open(os.path.join(v["model"], "config.json"), encoding="utf-8") as f:
            hf_config = json.load(f)
        return VllmConfig(
            model_config=model_config(v["model"], v["dtype"] or "auto", v["max_model_len"], hf_config),
            cache_config=CacheConfig(v["kv_cache_dtype"] or "auto", v["gpu_memory_utilization"] or 0.9),
            attention_config=attention_config(v["attention_backend"]),
        )


class AsyncEngineArgs(EngineArgs):
    pass
