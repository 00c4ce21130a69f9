"""Every engine setting reaches vLLM: rendered into the argv, then parsed back by an argparse parser
built from the release's own flag table (the registry generated from its wheel), it gives the value
the stack set - for every setting and every value the settings accept.

The oracle is independent of the code under test: the list of settings comes from the settings
model (not from the flag table that renders them), the parser from the registry's record of vLLM's
`add_argument` calls, and the parsing from Python's argparse, which vLLM's FlexibleArgumentParser
subclasses (vllm/utils/argparse_utils.py). A setting dropped from the flag table, a renamed flag
or a value written in a form vLLM reads differently fails here.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic.alias_generators import to_camel

from tests.paths import ROOT
from tests.stack_builders import edit, shipped_settings
from vllm_serving.command.vllm_argv import vllm_args
from vllm_serving.settings.engine import EngineSettings, SpeculativeSettings

RELEASE = "0.19.1"
"""The release the shipped stacks pin (the registry the rules read for them)."""
NOT_FLAGS = {
    "extra_args": "appended verbatim after the modelled flags (tests/command/test_vllm_argv.py)",
    "env": "container environment, not argv",
}
"""EngineSettings fields that are not a vLLM flag, each with where it is covered instead."""
DEST = {"max_model_len": "max_model_len"}
"""Settings field -> vLLM's argparse dest where they differ (none today: the names are vLLM's)."""
_TYPES = {"int": int, "float": float, "str": str, "json": json.loads}


def release_flags(release: str) -> dict[str, dict[str, Any]]:
    """The registry file as generated from the wheel, read directly (not through the loader)."""
    path = ROOT / "vllm_serving" / "engine" / "releases" / f"v{release}.json"
    flags: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["flags"]
    return flags


def release_parser(release: str) -> argparse.ArgumentParser:
    """argparse as vLLM builds it for `release`, from the registry's flag records."""
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False, allow_abbrev=False)
    seen: set[str] = set()
    for flag, row in release_flags(release).items():
        if flag in seen or row["dest"] is None:
            continue
        names = [flag, *row["aliases"]]
        seen.update(names, row["negations"])
        if row["action"] == "help":
            continue
        if row["action"] == "boolean_optional":
            parser.add_argument(*names, dest=row["dest"], action=argparse.BooleanOptionalAction, default=None)
        elif not row["takes_value"]:
            parser.add_argument(*names, dest=row["dest"], action="store_true", default=None)
        elif row["action"] != "store":  # append and vLLM's own actions: the values, as strings
            parser.add_argument(*names, dest=row["dest"], action="append", nargs=row["nargs"], default=None)
        else:
            kind = _TYPES.get(str(row["type"]), str)
            parser.add_argument(*names, dest=row["dest"], type=kind, nargs=row["nargs"], choices=row["choices"],
                                default=None)
    return parser


def _field_strategy(name: str) -> st.SearchStrategy[Any]:
    """Values the settings accept for `name`, drawn by validating candidates through the model."""
    info = EngineSettings.model_fields[name]
    annotation = str(info.annotation)
    if name == "speculative_config":
        return st.builds(lambda m, n: SpeculativeSettings(method=m, num_speculative_tokens=n),
                         st.sampled_from(["mtp", "ngram", "eagle3", "suffix"]), st.integers(1, 16))
    if "Literal" in annotation:
        literal = next(a for a in info.annotation.__args__ if a is not type(None))  # type: ignore[union-attr]
        return st.sampled_from(literal.__args__)
    if "bool" in annotation:
        return st.booleans() if "None" in annotation else st.just(True)
    if "float" in annotation:
        return st.floats(0.01, 1.0, allow_nan=False).map(lambda v: round(v, 4))
    if "int" in annotation:
        return st.integers(16, 1_000_000)
    return st.sampled_from(["qwen3", "qwen3_coder", "deepseek_r1", "hermes"])


ENGINE_FLAGS = sorted(set(EngineSettings.model_fields) - set(NOT_FLAGS))


def _expected(value: Any) -> Any:
    if isinstance(value, SpeculativeSettings):
        return value.model_dump(exclude_none=True)
    return value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_engine_setting_parses_back_to_its_value(data: st.DataObject) -> None:
    chosen = data.draw(st.lists(st.sampled_from(ENGINE_FLAGS), min_size=1, max_size=len(ENGINE_FLAGS), unique=True))
    values = {name: data.draw(_field_strategy(name), label=name) for name in chosen}
    base = shipped_settings("a100")
    cleared = {name: (False if name in ("trust_remote_code", "enable_auto_tool_choice") else None)
               for name in ENGINE_FLAGS}
    stack = edit(base, engine={**cleared, **values, "extra_args": ()})
    argv = list(vllm_args(stack))
    parsed = vars(release_parser(RELEASE).parse_args(argv))
    for name, value in values.items():
        dest = DEST.get(name, name)
        assert parsed[dest] == _expected(value), (
            f"engine.{to_camel(name)} = {value!r} reaches vLLM {RELEASE} as {dest}={parsed[dest]!r} (argv {argv})")
    for name in set(ENGINE_FLAGS) - set(values):
        assert parsed[DEST.get(name, name)] in (None, False), f"engine.{to_camel(name)} unset, yet in the argv {argv}"


def test_the_model_section_reaches_vllm() -> None:
    stack = edit(shipped_settings("a100"), model={"served_name": "qwen3.6-27b"})
    parsed = vars(release_parser(RELEASE).parse_args(list(vllm_args(stack))))
    assert parsed["model"] == stack.model.mount_path
    assert parsed["served_model_name"] == ["qwen3.6-27b"]


def test_every_engine_field_is_a_flag_or_named_as_not_one() -> None:
    """A new engine setting must reach vLLM (then the property above covers it) or say why not."""
    flags = release_flags(RELEASE)
    dests = {row["dest"] for row in flags.values()}
    for name in ENGINE_FLAGS:
        assert DEST.get(name, name) in dests, f"engine.{to_camel(name)} is no vLLM {RELEASE} flag"


def test_the_oracle_catches_a_setting_left_out_of_the_argv() -> None:
    """The parser built here is strict enough to notice: an argv without --max-num-batched-tokens
    leaves the dest unset, so the property above fails if the flag table loses that row."""
    parsed = vars(release_parser(RELEASE).parse_args(["--max-num-seqs", "8"]))
    assert parsed["max_num_batched_tokens"] is None and parsed["max_num_seqs"] == 8
