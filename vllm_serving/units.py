"""Sizes and durations as operators write them (`128g`, `20m`) and as providers want them."""

from __future__ import annotations

import re

# Docker's own notation (docker/go-units size.go RAMInBytes: `^(\d+(\.\d+)*) ?([kmgtp])?i?b?$`,
# case-insensitive, binary units): 32g = 32gb = 32Gi = 32GiB, the form Kubernetes users write too.
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)i?b?\s*$", re.IGNORECASE)
_SIZE_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
MIB = 1024 * 1024
GIB = 1024 * MIB


def parse_size(value: str | int) -> int:
    """Bytes from Docker's notation: `128g` = `128gb` = `128Gi` = 128 GiB (Docker's units are binary)."""
    if isinstance(value, bool):
        raise ValueError("a size must be a string like '32g' or a number of bytes")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    match = _SIZE.match(value)
    if not match:
        raise ValueError(f"'{value}' is not a size; write it as Docker does, e.g. '32g' or '512m'")
    number, unit = match.groups()
    return int(float(number) * 1024 ** _SIZE_POWER[unit.lower()])


_DOCKER_UNITS = ("k", "m", "g", "t", "p")
_KUBERNETES_UNITS = ("Ki", "Mi", "Gi", "Ti", "Pi")


def format_size(num_bytes: int, units: tuple[str, ...] = _DOCKER_UNITS) -> str:
    """Shortest exact binary notation: 137438953472 -> `128g` (Docker's units by default)."""
    for power in range(len(units), 0, -1):
        if num_bytes and num_bytes % 1024**power == 0:
            return f"{num_bytes // 1024 ** power}{units[power - 1]}"
    return str(num_bytes)


def kubernetes_quantity(num_bytes: int) -> str:
    """Kubernetes' binary quantity: 34359738368 -> `32Gi`."""
    return format_size(num_bytes, _KUBERNETES_UNITS)


# vLLM's human-readable integers (vllm/engine/arg_utils.py human_readable_int): a lower-case suffix
# is decimal (32k = 32000), an upper-case one binary (32K = 32768, whole numbers only).
HUMAN_INT = re.compile(r"\s*(\d+(?:\.\d+)?)([kKmMgGtT])\s*")
HUMAN_MULTIPLIERS = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
                     "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_human_int(text: str) -> int:
    """`32768`, `32k` (32000) or `32K` (32768), as `vllm serve --max-model-len` reads them."""
    if text.strip().isdigit():
        return int(text)
    match = HUMAN_INT.fullmatch(text)
    if not match or (match[2].isupper() and "." in match[1]):
        raise ValueError(f"{text!r} is not a whole number; write e.g. 32768, 32k (32000) or 32K (32768)")
    return int(float(match[1]) * HUMAN_MULTIPLIERS[match[2]])


_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def parse_duration(value: str | int) -> int:
    """Seconds from `90s`, `20m`, `1h30m` or a plain number of seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration must be a string like '20m' or a number of seconds")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("a duration must be positive")
        return value
    match = _DURATION.match(value.strip())
    if not value.strip() or not match:
        raise ValueError(f"'{value}' is not a duration; write e.g. '90s', '20m' or '1h30m'")
    hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise ValueError("a duration must be positive")
    return total


def go_duration(seconds: int) -> str:
    """Go's canonical `time.Duration` text (`30s`, `10m0s`, `1h0m0s`).

    Docker reads healthcheck durations back in this form; anything else diffs on every preview.
    """
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"
