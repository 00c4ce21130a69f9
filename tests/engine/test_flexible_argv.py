"""What vLLM's FlexibleArgumentParser does to argv before argparse (engine/flexible_argv.py), case by
case from its source: v0.19.1 vllm/utils/argparse_utils.py `parse_args` (the first `--model` moved
to the front, `-O<n>` to `--optimization-level <n>`, `_` to `-` in a name) and v0.10.2
vllm/utils/__init__.py (`-O<n>` to the dotted `-O.level=<n>`, `-O.<key>` left for the dotted keys)."""

from __future__ import annotations

import msgspec
import pytest

from vllm_serving.engine.flexible_argv import Token, rewrite
from vllm_serving.engine.release_registry import load

V0_19 = load("0.19.1").parser
V0_10 = load("0.10.2").parser


def _tokens(*texts: str) -> list[Token]:
    return [Token(text, (i,)) for i, text in enumerate(texts)]


def _texts(tokens: list[Token]) -> list[str]:
    return [t.text for t in tokens]


@pytest.mark.parametrize(("argv", "after"), [
    # args = ["serve", model_tag, *args[1:model_idx], *args[rest_start_idx:]]
    (("-tp", "2", "--model", "m", "--enforce-eager"), ["m", "-tp", "2", "--enforce-eager"]),
    (("-tp", "2", "--model=m", "--enforce-eager"), ["m", "-tp", "2", "--enforce-eager"]),
    (("--enforce-eager", "--model", "m"), ["m", "--enforce-eager"]),  # the model last
    (("--model", "m", "--model", "n"), ["m", "--model", "n"]),  # the first --model only
])
def test_the_first_model_option_becomes_the_positional(argv: tuple[str, ...], after: list[str]) -> None:
    assert _texts(rewrite(V0_19, _tokens(*argv)).tokens) == after


def test_a_moved_model_keeps_the_item_it_came_from() -> None:
    moved = rewrite(V0_19, _tokens("-tp", "2", "--model", "m")).tokens
    assert moved[0] == Token("m", (3,))


@pytest.mark.parametrize(("facts", "argv", "after"), [
    (V0_19, ("-O3",), ["--optimization-level", "3"]),
    (V0_19, ("-O=2",), ["--optimization-level", "2"]),
    (V0_19, ("-O.x",), ["--optimization-level", ".x"]),  # no dotted -O in v0.19.1: the rest is the level
    (V0_19, ("-O", "1"), ["--optimization-level", "1"]),
    # -O3 -> -O.level=3, a dotted key, then merged as every dotted key is: -O '{"level": 3}'
    (V0_10, ("-O3",), ["-O", "{}"]),
    (V0_10, ("--max_num_seqs", "8"), ["--max-num-seqs", "8"]),
    # `key, value = arg.split("=", 1)`: underscores become dashes in the name only, never in the value
    (V0_19, ("--served_model_name=my_model",), ["--served-model-name=my_model"]),
])
def test_the_optimization_shorthand_and_underscores_as_the_release_rewrites_them(
        facts: object, argv: tuple[str, ...], after: list[str]) -> None:
    assert _texts(rewrite(facts, _tokens(*argv)).tokens) == after  # type: ignore[arg-type]


def test_a_release_without_dotted_keys_keeps_them_as_written() -> None:
    facts = msgspec.structs.replace(V0_19, dotted_json_keys=False)
    kept = rewrite(facts, _tokens("--compilation-config.level", "3"))
    assert _texts(kept.tokens) == ["--compilation-config.level", "3"] and kept.dangling == []


def test_a_trailing_model_option_is_left_where_it_is() -> None:
    # v0.19.1 reads args[model_idx + 1] and stops with an IndexError: no model is moved to the front
    assert _texts(rewrite(V0_19, _tokens("--enforce-eager", "--model")).tokens) == ["--enforce-eager", "--model"]


@pytest.mark.parametrize("argv", [("-O3",), ("-O=3",), ("-O--enforce-eager",)])
def test_both_halves_of_a_rewritten_shorthand_keep_the_item_they_came_from(argv: tuple[str, ...]) -> None:
    # "-O3" -> "--optimization-level", "3": a problem with either half is the user's item 0
    assert [t.items for t in rewrite(V0_19, _tokens(*argv)).tokens] == [(0,), (0,)]
