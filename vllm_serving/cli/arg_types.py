"""The types of the verbs' numeric flags, one spelling for each kind of number.

argparse prints a type function's own name for a plain ValueError (`invalid _positive_int value`);
each of these raises ArgumentTypeError instead, whose message says what to write. Token counts
take vLLM's shorthand wherever they appear (`--max-model-len`, `--for-context`): `32k` is 32000
and `32K` 32768, as `vllm serve` reads them (units.parse_human_int).
"""

from __future__ import annotations

import argparse

from vllm_serving.units import parse_human_int


def whole(text: str, most: int, what: str) -> int:
    """A whole number from 1 to `most`."""
    count = int(text) if text.isdigit() else 0
    if not 1 <= count <= most:
        raise argparse.ArgumentTypeError(f"{text!r}: give {what}, a whole number from 1 to {most}")
    return count


def tokens(text: str) -> int:
    """A number of tokens, at least one: `32768`, `32k` (32000) or `32K` (32768)."""
    try:
        count = parse_human_int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give at least one token")
    return count


def positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number from 1 up")
    return int(text)


def non_negative_int(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number from 0 up")
    return int(text)


def positive_float(text: str, what: str = "a number above 0, e.g. 0.9") -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give {what}")
    return value
