"""A secret written into engine.env is refused with the command that stores it as the secret the
program reads: the config key (`apiKey`, `hfToken`, as in SECRET_KEYS and docs/security.md), never
the variable's name, which `pulumi config set --secret` would store under a key nothing reads.

Oracles: vLLM reads its key from VLLM_API_KEY (vllm/envs.py); huggingface_hub reads HF_TOKEN and,
when that is unset, its older HUGGING_FACE_HUB_TOKEN (huggingface_hub/constants.py).
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from vllm_serving.settings.engine import EngineSettings


def _fix(name: str) -> str:
    with pytest.raises(ValidationError) as exc:
        EngineSettings(env={name: "value"})
    return str((exc.value.errors()[0].get("ctx") or {})["fix"])


@pytest.mark.parametrize(("name", "key"), [
    ("VLLM_API_KEY", "apiKey"), ("HF_TOKEN", "hfToken"), ("HUGGING_FACE_HUB_TOKEN", "hfToken"),
])
def test_a_secret_the_program_sets_is_refused_with_its_config_key(name: str, key: str) -> None:
    assert _fix(name) == f"remove it from engine.env and run: pulumi config set --secret {key}"


@pytest.mark.parametrize("name", ["HFTOKEN", "MYAPIKEY", "DBPASSWORD", "MINIOSECRET", "GPGPASSPHRASE",
                                  "hf_githubtoken", "DB_ROOTPASSWD"])
def test_a_credential_word_glued_to_its_prefix_is_refused(name: str) -> None:
    assert "--secret" in _fix(name)
