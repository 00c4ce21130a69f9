"""Which environment variable names hold a credential, judged word by word.

A name is split on `_` (case folded). It holds a credential when a credential word (`TOKEN`,
`PASSWORD`, `KEY`, ...), or a word ending in one glued on (`APIKEY`, `HFTOKEN`), is followed only
by words that qualify the value itself (`_ID`, `_VALUE`): `OPENAI_API_KEY`, `AWS_ACCESS_KEY_ID`,
`S3_SECRET_ACCESS_KEY` (both read by vllm/envs.py for S3 weights), `GITHUB_PAT`. A credential word
followed by anything else names a setting about the word, not a secret: vLLM's own
`VLLM_MULTI_STREAM_GEMM_TOKEN_THRESHOLD` (vllm/envs.py) counts tokens, and substrings never count:
`TOKENIZERS_PARALLELISM`, `VLLM_MAX_TOKENS_PER_EXPERT_FP4_MOE`, `VLLM_ENABLE_PREGRAD_PASSES`.
"""

from __future__ import annotations

CREDENTIAL_WORDS = frozenset({
    "TOKEN", "PASSWORD", "PASSWD", "PASS", "SECRET", "KEY", "APIKEY", "PAT", "PASSPHRASE", "PRIVATEKEY",
    "ACCESSKEY", "SECRETKEY", "AUTHTOKEN", "BEARER", "COOKIE", "CREDENTIAL",
})
"""Words that make a variable a credential: GITHUB_PAT, DB_PASS, OPENAI_API_KEY, AWS_SESSION_TOKEN."""
GLUED_SUFFIXES = ("APIKEY", "TOKEN", "PASSWORD", "PASSWD", "SECRET", "PASSPHRASE")
"""Credential words people glue to a prefix: HFTOKEN, MYAPIKEY, DBPASSWORD."""
VALUE_QUALIFIERS = frozenset({"ID", "VALUE", "STRING", "STR", "RAW", "B64", "BASE64", "HEX", "V2"})
"""Words after a credential word that still describe the credential itself: AWS_ACCESS_KEY_ID."""


def is_credential_name(name: str) -> bool:
    """True when `name` (an environment variable name) reads as holding a credential."""
    words = [w for w in name.upper().split("_") if w]
    for i, word in enumerate(words):
        if (word in CREDENTIAL_WORDS or word.endswith(GLUED_SUFFIXES)) and VALUE_QUALIFIERS.issuperset(words[i + 1:]):
            return True
    return False
