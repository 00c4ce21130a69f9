from __future__ import annotations

import pytest

from vllm_serving.units import format_size, go_duration, parse_duration, parse_size


@pytest.mark.parametrize(("seconds", "text"), [(30, "30s"), (600, "10m0s"), (1260, "21m0s"),
                                               (3600, "1h0m0s"), (3725, "1h2m5s")])
def test_go_canonical_durations(seconds: int, text: str) -> None:
    assert go_duration(seconds) == text
    assert parse_duration(text) == seconds


def test_docker_sizes_are_binary() -> None:
    assert parse_size("128g") == 128 * 1024**3
    assert parse_size("32GB") == 32 * 1024**3
    assert format_size(parse_size("128g")) == "128g"
    # Docker's RAMInBytes takes an optional i (docker/go-units size.go): Kubernetes' 64Gi means the same
    assert parse_size("64Gi") == parse_size("64GiB") == parse_size("16 GB") * 4 == 64 * 1024**3
    with pytest.raises(ValueError):
        parse_size("12 parsecs")
