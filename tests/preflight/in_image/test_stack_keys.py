"""vLLM's words mapped back to the stack keys, through the project's flag table: as vLLM writes
them in v0.19.1 (the messages are its own, from the files named)."""

from __future__ import annotations

import pytest

from tests.stack_builders import make_spec
from vllm_serving.preflight.command import flag_keys
from vllm_serving.preflight.in_image.stack_keys import argv_flags, keys_for, keys_named

KEYS = flag_keys(make_spec("v100", engine={"extraArgs": ["--limit-mm-per-prompt.image=0", "--enforce-eager"]}))


@pytest.mark.parametrize(("message", "keys"), [
    # config/model.py _get_and_verify_max_len; the env var's name must not count as the field
    ("User-specified max_model_len (300000) is greater than the derived max_model_len (max_position_embeddings="
     "262144 ...). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
     ["engine.maxModelLen"]),
    # argparse, through FlexibleArgumentParser
    ("argument --kv-cache-dtype: invalid choice: 'fp9' (choose from auto, bfloat16)", ["engine.kvCacheDtype"]),
    # entrypoints/openai/cli_args.py validate_parsed_serve_args
    ("Error: --enable-auto-tool-choice requires --tool-call-parser",
     ["engine.enableAutoToolChoice", "engine.toolCallParser"]),
    # entrypoints/openai/api_server.py validate_api_server_args: the field in words
    ("invalid tool call parser: qwen4 (chose from { hermes,qwen3_coder })", ["engine.toolCallParser"]),
    # platforms/cuda.py: a quoted one-word field; bare, `dtype` or `model` is ordinary English
    ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. You can use float16 instead "
     "by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.", ["engine.dtype"]),
    ("the model's dtype and the model config", []),
    # a field in words at the start of a sentence (model_executor/models/qwen3_moe.py)
    ("Tensor parallel size 16 is greater than the number of experts 8.", ["engine.tensorParallelSize"]),
    ("--no-enable-prefix-caching is not supported with this model", ["engine.enablePrefixCaching"]),
    # a flag of engine.extraArgs, written with underscores
    ("--enforce_eager cannot be combined with ...", ["engine.extraArgs"]),
])
def test_the_keys_a_message_names(message: str, keys: list[str]) -> None:
    assert keys_named(message, KEYS) == [f"vllm-serving:{k}" for k in keys]


def test_an_attention_refusal_is_about_the_attention_flags_the_argv_sets() -> None:
    message = "Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. Reason: [...]"
    argv = ["--model", "/m", "--attention-backend", "FLASH_ATTN", "--kv_cache_dtype=fp8"]
    assert keys_for("attention", message, KEYS, argv) == ["vllm-serving:engine.attentionBackend",
                                                          "vllm-serving:engine.kvCacheDtype"]
    assert keys_for("config", message, KEYS, argv) == []


def test_argv_flags_are_read_as_vllm_reads_them() -> None:
    assert argv_flags(["--max_model_len=8192", "--dtype", "half", "-tp", "8", "/m"]) == {"--max-model-len", "--dtype"}
