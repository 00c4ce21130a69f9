"""The verbs' number flags (cli/arg_types.py): what each accepts, and the line a wrong one gets.

Token counts as `vllm serve` reads them: vLLM v0.19.1 engine/arg_utils.py `human_readable_int`
("'1k' -> 1,000", "'1K' -> 1,024", "'25.6k' -> 25,600")."""

from __future__ import annotations

import argparse

import pytest

from vllm_serving.cli.arg_types import non_negative_int, positive_float, positive_int, tokens, whole


@pytest.mark.parametrize(("text", "count"), [("32768", 32768), ("32k", 32000), ("32K", 32768), ("25.6k", 25600),
                                             ("1M", 1_048_576), ("1", 1)])
def test_tokens_read_vllms_shorthand(text: str, count: int) -> None:
    assert tokens(text) == count


def test_no_tokens_is_refused() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="'0': give at least one token"):
        tokens("0")


@pytest.mark.parametrize(("text", "most", "value"), [("1", 8, 1), ("8", 8, 8)])
def test_whole_takes_one_to_most(text: str, most: int, value: int) -> None:
    assert whole(text, most, "a GPU count") == value


@pytest.mark.parametrize("text", ["0", "9", "x", "-1", "2.5"])
def test_whole_refuses_what_is_outside_and_says_the_range(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        whole(text, 8, "a GPU count")
    assert str(refused.value) == f"{text!r}: give a GPU count, a whole number from 1 to 8"


def test_counts_from_one_and_from_zero() -> None:
    assert (positive_int("1"), positive_int("12"), non_negative_int("0"), non_negative_int("7")) == (1, 12, 0, 7)
    for text in ("0", "-3", "two"):
        with pytest.raises(argparse.ArgumentTypeError, match="give a whole number from 1 up"):
            positive_int(text)
    for text in ("-1", "1.5"):
        with pytest.raises(argparse.ArgumentTypeError, match="give a whole number from 0 up"):
            non_negative_int(text)


def test_positive_float_refuses_zero_negatives_nan_and_words() -> None:
    assert positive_float("0.9") == 0.9 and positive_float("1e-3") == 0.001
    for text in ("0", "-0.5", "nan", "most"):
        with pytest.raises(argparse.ArgumentTypeError) as refused:
            positive_float(text)
        assert str(refused.value) == f"{text!r}: give a number above 0, e.g. 0.9"
    with pytest.raises(argparse.ArgumentTypeError, match="'0': give seconds"):
        positive_float("0", "seconds")
