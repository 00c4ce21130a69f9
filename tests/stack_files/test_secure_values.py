"""How a `secure:` value in a stack file is read: present, never quoted, and judged by the form the
stack's secrets provider writes (vllm_serving/stack_files/ciphertext.py cites Pulumi's sources).

Sizes by hand: Pulumi's symmetric crypter seals with AES-256-GCM, a 12-byte nonce and a 16-byte tag
(sdk/go/common/resource/config/crypt.go), so nothing it writes is shorter than 12 + 16 = 28 bytes.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from vllm_serving.stack_files.loader import read_stack_file

NONCE = base64.b64encode(b"n" * 12).decode()
SEALED = base64.b64encode(b"s" * 40).decode()
V1 = f"v1:{NONCE}:{SEALED}"
SERVICE = base64.b64encode(b"c" * 40).decode()


def _read(tmp_path: Path, secure: str, header: str = "") -> tuple[dict[str, object], list[str]]:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(f"{header}config:\n  vllm-serving:apiKey:\n    secure: {secure}\n", encoding="utf-8")
    read = read_stack_file(path, tmp_path)
    return read.values, [f.code for f in read.problems]


def test_a_secure_value_reads_as_present_and_its_ciphertext_goes_no_further(tmp_path: Path) -> None:
    values, problems = _read(tmp_path, V1)
    assert problems == []
    assert values["vllm-serving:apiKey"] == "[secret]"
    assert NONCE not in repr(values) and SEALED not in repr(values)


@pytest.mark.parametrize(("size", "ok"), [(28, True), (27, False)])
def test_a_service_ciphertext_needs_a_nonce_and_a_tag(tmp_path: Path, size: int, ok: bool) -> None:
    _, problems = _read(tmp_path, base64.b64encode(b"c" * size).decode())
    assert problems == ([] if ok else ["config-secret-not-ciphertext"])


@pytest.mark.parametrize("marker", ["encryptionsalt", "encryptedkey"])
def test_passphrase_and_cloud_kms_stacks_take_only_v1_values(tmp_path: Path, marker: str) -> None:
    """`encryptedkey:` is a cloud KMS stack (pkg/secrets/cloud/manager.go): the same `v1:` crypter."""
    header = f"{marker}: {V1}\n"
    assert _read(tmp_path, SERVICE, header)[1] == ["config-secret-not-ciphertext"]
    assert _read(tmp_path, V1, header)[1] == []
    assert _read(tmp_path, SERVICE)[1] == []  # a Pulumi Cloud stack writes this form
