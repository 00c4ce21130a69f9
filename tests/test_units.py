"""Sizes and durations as operators write them: Docker's size notation (docker/go-units size.go
RAMInBytes: binary units, optional `i` and `b`, any case) and Go's duration text, which Docker
reads back and would otherwise show as a diff on every preview. Expected figures are worked out
by hand here."""

from __future__ import annotations

import pytest

from vllm_serving.units import format_size, go_duration, kubernetes_quantity, parse_duration, parse_size

GIB = 1024**3


@pytest.mark.parametrize(("seconds", "text"), [(30, "30s"), (600, "10m0s"), (1260, "21m0s"),
                                               (3600, "1h0m0s"), (3725, "1h2m5s"), (0, "0s"),
                                               (59, "59s"), (61, "1m1s"), (7322, "2h2m2s")])
def test_go_canonical_durations(seconds: int, text: str) -> None:
    # Go's time.Duration.String(): hours and minutes only when non-zero above them, seconds always
    assert go_duration(seconds) == text


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("20m", 1200), ("1h30m", 5400), ("2h", 7200),
                                               ("1h0m0s", 3600), (" 20m ", 1200), ("1m30s", 90), (45, 45)])
def test_durations_as_operators_write_them(text: str | int, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "  ", "0s", "0", 0, -5, True, "20 minutes", "1d", "m", "30s20m", "1.5h"])
def test_no_duration_is_refused_with_how_to_write_one(text: str | int) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


@pytest.mark.parametrize(("text", "size"), [
    ("128g", 128 * GIB), ("32GB", 32 * GIB), ("64Gi", 64 * GIB), ("64GiB", 64 * GIB), ("16 GB", 16 * GIB),
    ("512m", 512 * 1024**2), ("1k", 1024), ("2t", 2 * 1024**4), ("1p", 1024**5), ("100", 100), ("100b", 100),
    ("1.5g", 3 * GIB // 2), (" 8g ", 8 * GIB), (4096, 4096), (0, 0),
])
def test_docker_sizes_are_binary(text: str | int, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["12 parsecs", "g", "-1g", "1x", "", -1, True, "1,5g"])
def test_no_size_is_refused(text: str | int) -> None:
    with pytest.raises(ValueError, match="size"):
        parse_size(text)


@pytest.mark.parametrize(("size", "docker", "kubernetes"), [
    (128 * GIB, "128g", "128Gi"),
    (1536 * 1024**2, "1536m", "1536Mi"),  # 1.5 GiB: the largest unit that divides it exactly
    (1024, "1k", "1Ki"),
    (3 * 1024**4, "3t", "3Ti"),
    (2 * 1024**5, "2p", "2Pi"),
    (1000, "1000", "1000"),  # not a multiple of 1024: plain bytes
    (0, "0", "0"),
])
def test_sizes_print_in_the_shortest_exact_unit(size: int, docker: str, kubernetes: str) -> None:
    assert format_size(size) == docker
    assert kubernetes_quantity(size) == kubernetes
