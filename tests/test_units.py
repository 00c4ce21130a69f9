"""Sizes and durations as operators write them: Docker's size notation (docker/go-units size.go
RAMInBytes: binary units, optional `i` and `b`, any case) and Go's duration text, which Docker
reads back and would otherwise show as a diff on every preview. Expected figures are worked out
by hand here."""

from __future__ import annotations

import pytest

from vllm_serving import units
from vllm_serving.units import format_size, go_duration, kubernetes_quantity, parse_duration, parse_size

GIB = 1024**3


def test_the_units_other_modules_size_with_are_binary() -> None:
    assert (units.MIB, units.GIB) == (1024**2, 1024**3)


@pytest.mark.parametrize(("seconds", "text"), [(30, "30s"), (600, "10m0s"), (1260, "21m0s"),
                                               (3600, "1h0m0s"), (3725, "1h2m5s"), (0, "0s"),
                                               (59, "59s"), (61, "1m1s"), (7322, "2h2m2s")])
def test_go_canonical_durations(seconds: int, text: str) -> None:
    # Go's time.Duration.String(): hours and minutes only when non-zero above them, seconds always
    assert go_duration(seconds) == text


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("20m", 1200), ("1h30m", 5400), ("2h", 7200),
                                               ("1h0m0s", 3600), (" 20m ", 1200), ("1m30s", 90), (45, 45),
                                               (1, 1), ("1s", 1)])
def test_durations_as_operators_write_them(text: str | int, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "  ", "0", "90", "20 minutes", "1d", "m", "30s20m", "1.5h"])
def test_no_duration_is_refused_with_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_duration(text)
    assert str(refused.value) == f"'{text}' is not a duration; write e.g. '90s', '20m' or '1h30m'"


@pytest.mark.parametrize(("value", "message"), [
    ("0s", "a duration must be positive"), ("0h0m", "a duration must be positive"), (0, "a duration must be positive"),
    (-5, "a duration must be positive"), (True, "a duration must be a string like '20m' or a number of seconds")])
def test_a_duration_that_is_no_wait_is_refused(value: str | int, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_duration(value)
    assert str(refused.value) == message


@pytest.mark.parametrize(("text", "size"), [
    ("128g", 128 * GIB), ("32GB", 32 * GIB), ("64Gi", 64 * GIB), ("64GiB", 64 * GIB), ("16 GB", 16 * GIB),
    ("512m", 512 * 1024**2), ("1k", 1024), ("2t", 2 * 1024**4), ("1p", 1024**5), ("100", 100), ("100b", 100),
    ("1.5g", 3 * GIB // 2), (" 8g ", 8 * GIB), (4096, 4096), (0, 0),
])
def test_docker_sizes_are_binary(text: str | int, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["12 parsecs", "g", "-1g", "1x", "", "1,5g"])
def test_no_size_is_refused_with_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_size(text)
    assert str(refused.value) == f"'{text}' is not a size; write it as Docker does, e.g. '32g' or '512m'"


@pytest.mark.parametrize(("value", "message"), [
    (-1, "a size cannot be negative"), (True, "a size must be a string like '32g' or a number of bytes")])
def test_a_number_that_is_no_size_is_refused(value: int, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_size(value)
    assert str(refused.value) == message


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
