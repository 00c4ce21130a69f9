"""Whether a `secure:` value in a stack file has the form Pulumi writes, never what it decrypts to.

What Pulumi writes (pulumi/pulumi, Apache-2.0):
- passphrase stacks (`encryptionsalt:` in the stack file) and cloud KMS stacks (`encryptedkey:`):
  `v1:<base64 nonce>:<base64 ciphertext>` - AES-256-GCM with a 12-byte nonce, the ciphertext
  carrying a 16-byte tag (`symmetricCrypter` in sdk/go/common/resource/config/crypt.go; the cloud
  manager in pkg/secrets/cloud/manager.go uses the same crypter with a KMS-wrapped key);
- Pulumi Cloud stacks: the service's ciphertext in standard base64 (`serviceCrypter` in
  pkg/secrets/service/manager.go). In stack files these decode to 32 bytes or more; the floor
  checked is 28 (a nonce and a tag), enough to refuse a typed-in word that happens to be base64.
A password typed after `secure:` by hand fails these checks; one that passes by chance still
fails when Pulumi decrypts it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

NONCE_BYTES = 12
TAG_BYTES = 16
SERVICE_MIN_BYTES = NONCE_BYTES + TAG_BYTES
# top-level stack-file keys that say the secrets are `v1:` values (see the module docstring)
SYMMETRIC_MARKERS = ("encryptionsalt", "encryptedkey")


def _decoded(text: str) -> bytes | None:
    """Standard, padded base64 as Go's base64.StdEncoding reads it; None when it is not."""
    try:
        return base64.b64decode(text, validate=True) if text else None
    except (binascii.Error, ValueError):
        return None


def _is_symmetric(text: str) -> bool:
    parts = text.split(":")
    if len(parts) != 3 or parts[0] != "v1":
        return False
    nonce, sealed = _decoded(parts[1]), _decoded(parts[2])
    return nonce is not None and len(nonce) == NONCE_BYTES and sealed is not None and len(sealed) >= TAG_BYTES


def is_ciphertext(value: Any, symmetric_only: bool) -> bool:
    """Whether `value` is shaped like a ciphertext Pulumi wrote; `symmetric_only` for passphrase
    and cloud KMS stacks, where only `v1:` values can decrypt."""
    if not isinstance(value, str):
        return False
    if _is_symmetric(value):
        return True
    sealed = None if symmetric_only else _decoded(value)
    return sealed is not None and len(sealed) >= SERVICE_MIN_BYTES


def symmetric_stack(document: Mapping[Any, Any]) -> bool:
    """Whether the stack file declares a passphrase or cloud KMS secrets provider."""
    return any(document.get(marker) for marker in SYMMETRIC_MARKERS)
