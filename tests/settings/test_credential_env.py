"""engine.env refuses every variable that holds a credential - the names vLLM and its libraries read
and the shapes people write - and accepts vLLM's own tuning variables that merely mention a token.

A credential in engine.env sits in plain text in the stack file, the container spec and
`docker inspect`; the secrets (apiKey, hfToken) are the only way in. The lists below are this
test's own oracle, written from the sources named beside them, not derived from the code.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from vllm_serving.settings.engine import EngineSettings

READ_BY_VLLM = (
    "VLLM_API_KEY",  # vllm/envs.py: the server's bearer key
    "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY",  # vllm/envs.py: weights from S3
    "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",  # huggingface_hub/constants.py
    "OPENAI_API_KEY",  # vllm/benchmarks, vllm/entrypoints/openai tools
    "MODELSCOPE_API_TOKEN",  # vllm/transformers_utils (VLLM_USE_MODELSCOPE)
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",  # boto3, runai-model-streamer
    "WANDB_API_KEY", "GITHUB_TOKEN", "GITHUB_PAT", "AZURE_CLIENT_SECRET",
)
TUNING_NOT_SECRETS = (
    "TOKENIZERS_PARALLELISM",  # huggingface tokenizers
    "VLLM_MAX_TOKENS_PER_EXPERT_FP4_MOE", "VLLM_MULTI_STREAM_GEMM_TOKEN_THRESHOLD",  # vllm/envs.py
    "VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD", "VLLM_ENABLE_PREGRAD_PASSES", "VLLM_USE_FASTOKENS",
    "VLLM_MAX_BAD_WORDS_TOTAL_TOKENS", "HF_HUB_OFFLINE", "NCCL_DEBUG", "PYTORCH_CUDA_ALLOC_CONF",
    "VLLM_ATTENTION_BACKEND", "CUDA_VISIBLE_DEVICES", "MAX_JOBS", "PWD", "VLLM_KEYPOINT_MODE",
)
CREDENTIAL_TAILS = ("TOKEN", "API_KEY", "APIKEY", "SECRET", "PASSWORD", "PASSWD", "PASS", "PAT", "ACCESS_KEY",
                    "SECRET_KEY", "PRIVATE_KEY", "PASSPHRASE", "AUTH_TOKEN", "ACCESS_KEY_ID", "KEY",
                    "SECRETKEY", "ACCESSKEY", "PRIVATEKEY", "AUTHTOKEN", "BEARER", "BEARER_TOKEN", "COOKIE",
                    "SESSION_COOKIE", "CREDENTIAL", "CLIENT_SECRET", "TOKEN_VALUE", "API_KEY_B64")
"""How people end a credential's name (OPENAI_API_KEY, DB_PASSWD, GH_PAT, AWS_ACCESS_KEY_ID, the glued
MINIO_SECRETKEY, a cookie or bearer token, a value's encoding after it: API_KEY_B64)."""
PREFIX_WORDS = st.sampled_from(["OPENAI", "HF", "DB", "MY", "AWS", "S3", "GH", "ANTHROPIC", "VLLM", "NGC",
                                "REGISTRY", "HARBOR", "MINIO", "X", "SERVICE", "ADMIN"])


def refused(name: str) -> bool:
    try:
        EngineSettings(env={name: "value"})
    except ValidationError as exc:
        fix = str((exc.errors()[0].get("ctx") or {}).get("fix", ""))
        assert "--secret" in fix, f"{name}: the fix must point to the secrets, got {fix!r}"
        return True
    return False


@pytest.mark.parametrize("name", READ_BY_VLLM)
def test_credentials_vllm_and_its_libraries_read_are_refused(name: str) -> None:
    assert refused(name)
    assert refused(name.lower())


@pytest.mark.parametrize("name", TUNING_NOT_SECRETS)
def test_tuning_variables_that_mention_a_token_are_accepted(name: str) -> None:
    assert not refused(name)


@pytest.mark.parametrize("tail", CREDENTIAL_TAILS)
def test_each_way_of_ending_a_credentials_name_is_refused(tail: str) -> None:
    assert refused(tail) and refused(f"MY_{tail}") and refused(f"MY_SERVICE_{tail}".lower())


@settings(max_examples=150, deadline=None)
@given(prefix=st.lists(PREFIX_WORDS, min_size=0, max_size=3), tail=st.sampled_from(CREDENTIAL_TAILS),
       case=st.sampled_from([str.upper, str.lower, str.title]))
def test_every_credential_shaped_name_is_refused(prefix: list[str], tail: str, case: object) -> None:
    name = "_".join([*prefix, tail])
    assert callable(case)
    assert refused(case(name)), name


@settings(max_examples=80, deadline=None)
@given(prefix=st.lists(PREFIX_WORDS, min_size=1, max_size=3),
       word=st.sampled_from(["TOKENS", "TOKENIZER", "KEYS_CACHE", "PASSES", "TOKEN_THRESHOLD", "TOKEN_BUDGET"]))
def test_a_setting_about_tokens_is_not_a_credential(prefix: list[str], word: str) -> None:
    assert not refused("_".join([*prefix, word]))
