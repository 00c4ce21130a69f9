"""/dev/shm is given in whole MiB (the Docker provider's `shm_size` is in MB, binary: bytes / 2**20);
a size between two MiB rounds up, so the container never gets less than the stack file asked for."""

from __future__ import annotations

import pytest

from tests.settings.minimal_stack import parse_minimal


@pytest.mark.parametrize(("text", "mib"), [
    ("1.1g", 1127),  # 1.1 x 1024 = 1126.4 MiB
    ("1000k", 1),    # 1000 KiB = 0.98 MiB
    ("2049k", 3),    # 2 MiB and 1 KiB
    ("2048k", 2),    # exactly 2 MiB: no rounding
])
def test_a_size_between_two_mib_rounds_up(text: str, mib: int) -> None:
    assert parse_minimal(container={"shmSize": text}).container.shm_size_mb == mib
