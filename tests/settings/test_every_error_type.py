"""Every kind of mistake a stack file can make gets a finding of its own, in the stack file's words.

pydantic reports a mistake by an error type (`int_parsing`, `literal_error`, ...); the settings turn
each type into a finding that says what to write. The walk below puts wrong values of every shape
YAML can produce into every key of every settings model and collects the types raised, so a new
field whose mistakes would fall through to pydantic's own message ("Input should be a valid
integer, got a number with a fractional part") fails here, and so does a table entry no key reaches.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any, get_args, get_origin

import pytest
from pydantic import BaseModel, ValidationError

from tests.settings.minimal_stack import BASE
from vllm_serving.findings import ConfigError, Finding
from vllm_serving.settings import StackSettings
from vllm_serving.settings.stack_config import HANDLED_TYPES, _finding_from, parse_stack_config

PROJECT = "vllm-serving"
# what YAML can hand a key: each scalar kind, a list, a mapping, nothing, and edge values of each
WRONG_VALUES: tuple[Any, ...] = ([1, 2], {"a": 1}, "x", "", True, 1.5, -1, 10**9, None, ["x"], [{"a": 1}], 0, "1:2")


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """(the settings model a field holds, whether as a list of them): `X`, `X | None`,
    `tuple[X, ...]`, `tuple[X, ...] | None`."""
    for arg in (annotation, *get_args(annotation)):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg, False
        if get_origin(arg) is tuple:
            item = get_args(arg)[0]
            if isinstance(item, type) and issubclass(item, BaseModel):
                return item, True
    return None, False


def _paths(model: type[BaseModel], path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every key of `model` as the stack file nests it; a list of models as its first item ([0])."""
    for name, field in model.model_fields.items():
        if name == "secrets_set":
            continue
        here = (*path, field.alias or name)
        yield here
        inner, listed = _model_in(field.annotation)
        if inner is not None:
            yield from _paths(inner, (*here, 0) if listed else here)


def _field_at(path: tuple[str | int, ...]) -> Any:
    model: type[BaseModel] | None = StackSettings
    field = None
    for part in path:
        if isinstance(part, int):
            continue
        assert model is not None
        field = next(f for n, f in model.model_fields.items() if (f.alias or n) == part)
        model = _model_in(field.annotation)[0]
    return field


def _put(raw: dict[str, Any], path: tuple[str | int, ...], value: Any) -> None:
    node: Any = raw
    for part, after in zip(path, path[1:], strict=False):
        fresh: Any = [{}] if isinstance(after, int) else {}
        if isinstance(part, int):
            node = node[part]
        else:
            if not isinstance(node.get(part), (dict, list)):
                node[part] = fresh
            node = node[part]
    node[path[-1]] = value


def _types_raised() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in _paths(StackSettings):
        for value in WRONG_VALUES:
            raw = copy.deepcopy(BASE)
            _put(raw, path, value)
            try:
                StackSettings.model_validate(raw | {"secretsSet": frozenset()}, by_name=False)
            except ValidationError as exc:
                for err in exc.errors():
                    found.setdefault(err["type"], set()).add(".".join(map(str, err["loc"])))
    return found


def test_every_error_type_a_key_can_raise_has_a_finding_of_its_own_and_every_handled_type_is_raised() -> None:
    raised = _types_raised()
    assert set(raised) - HANDLED_TYPES == set(), {t: sorted(raised[t])[:3] for t in set(raised) - HANDLED_TYPES}
    assert HANDLED_TYPES - set(raised) == set(), "a handled type no key raises: remove it from the tables"


def _one(key: str, **sections: Any) -> Finding:
    try:
        parse_stack_config({f"{PROJECT}:{k}": v for k, v in {**BASE, **sections}.items()})
    except ConfigError as exc:
        found = {f.key: f for f in exc.findings}
        assert key in found, found
        return found[key]
    raise AssertionError("no finding")


@pytest.mark.parametrize(("engine", "key", "message"), [
    ({"maxModelLen": 8192.5}, "maxModelLen", "expects int, got 8192.5"),
    ({"tensorParallelSize": 1.5}, "tensorParallelSize", "expects int, got 1.5"),
])
def test_a_fraction_for_a_whole_number_says_to_write_a_whole_number(engine: dict[str, Any], key: str,
                                                                    message: str) -> None:
    f = _one(f"{PROJECT}:engine.{key}", engine=engine)
    assert (f.code, f.message) == ("config-type", message)
    assert f.fix.startswith("write a whole number such as 8192 (")


def test_an_error_type_not_seen_before_still_names_the_key_and_its_documentation() -> None:
    err = {"type": "uuid_parsing", "loc": ("engine", "maxNumSeqs"), "msg": "Input should be a valid UUID",
           "input": "x"}
    f = _finding_from(err)
    assert (f.code, f.key, f.message) == ("config-invalid", f"{PROJECT}:engine.maxNumSeqs",
                                          "Input should be a valid UUID")
    assert f.fix.startswith("see the key in docs/configuration.md (") and "--max-num-seqs" in f.fix


def test_an_error_of_the_whole_stack_not_seen_before_points_to_the_documentation() -> None:
    f = _finding_from({"type": "value_error", "loc": (), "msg": "Value error, sections disagree", "input": {}})
    assert (f.key, f.message, f.fix) == (f"{PROJECT}:", "Value error, sections disagree",
                                         "see the key in docs/configuration.md")


def test_a_list_item_that_is_no_mapping_says_so_without_documentation_of_its_own() -> None:
    f = _one(f"{PROJECT}:waivers[0]", waivers=["engine-dtype"])
    assert (f.code, f.message, f.fix) == ("config-type", "must be a mapping of keys, got text",
                                          "write it as YAML keys under waivers[0]")


def test_a_nested_key_with_space_around_it_is_quoted_where_it_stands() -> None:
    f = _one(f"{PROJECT}:kubernetes.service.' port'", target={"kind": "kubernetes"},
             kubernetes={"service": {" port": 8000}})
    assert f.message == "unknown key ' port': it has white space around it (inside the quotes)"
    assert f.fix == "write it as port (camelCase, as the YAML keys are spelt)"


def test_a_long_unknown_key_is_quoted_to_sixty_characters_wherever_it_stands() -> None:
    long = "k" * 80
    assert _one(f"{PROJECT}:engine.{long}", engine={long: 1}).message == f"unknown key {'k' * 60!r}"
    assert _one(f"{PROJECT}:{long}", **{long: 1}).message == f"unknown config key {'k' * 60!r}"
    dotted = "engine." + long
    f = _one(f"{PROJECT}:{dotted}", **{dotted: 1})
    assert f.message == f"unknown config key {dotted[:60]!r}: a dotted path is not a key in the stack file"
    assert f.fix == (f"nest it: {'k' * 60} indented under {PROJECT}:engine "
                     f"(pulumi config set --path '{dotted[:60]}' VALUE writes it so)")


def test_a_dotted_key_two_levels_deep_is_nested_under_its_first_section() -> None:
    f = _one(f"{PROJECT}:engine.env.NCCL_DEBUG", **{"engine.env.NCCL_DEBUG": "INFO"})
    assert f.fix == (f"nest it: env.NCCL_DEBUG indented under {PROJECT}:engine "
                     f"(pulumi config set --path 'engine.env.NCCL_DEBUG' VALUE writes it so)")


def test_a_dotted_key_under_no_section_is_an_unknown_key_with_the_keys_to_choose_from() -> None:
    f = _one(f"{PROJECT}:zzzz.qqqq", **{"zzzz.qqqq": 1})
    assert f.message == "unknown config key 'zzzz.qqqq'"
    assert f.fix.startswith("remove it; known keys: target, hardware, ")


def test_a_file_of_too_many_problems_says_what_it_probably_is() -> None:
    values = {f"{PROJECT}:{k}": v for k, v in BASE.items()} | {f"{PROJECT}:x{i}": 1 for i in range(60)}
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values)
    last = caught.value.findings[-1]
    assert (last.code, last.key) == ("config-too-many-problems", PROJECT + ":")
    assert last.fix == ("fix the ones above first (a stack file with this many is pasted in the wrong place or "
                        "not a stack file), then run vllm-stack check again")


def test_top_level_mistakes_leave_room_for_the_sections_own_until_the_cap() -> None:
    # 45 unknown top-level keys, then 10 wrong values inside sections: 5 fit, 5 are counted
    engine = {f"k{i}": 1 for i in range(10)}
    values = ({f"{PROJECT}:{k}": v for k, v in {**BASE, "engine": engine}.items()}
              | {f"{PROJECT}:x{i:02d}": 1 for i in range(45)})
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values)
    found = caught.value.findings
    assert [f.key for f in found[45:50]] == [f"{PROJECT}:engine.k{i}" for i in range(5)]
    assert found[-1].message == "and 5 more problems past the first 50"
    assert len(found) == 51


def _holds_numbers(annotation: Any) -> bool:
    """Written from the types, not read from the settings code: int or float, bare or in
    `X | None`, Annotated or a tuple, and never bool."""
    words = set(re.findall(r"[A-Za-z_.]+", str(annotation)))
    return bool(words & {"int", "float"}) and not words & {"bool", "Literal", "typing.Literal"}


def test_no_number_key_takes_a_yaml_boolean_as_one_or_zero() -> None:
    # pydantic's lax mode reads True as 1: `tensorParallelSize: yes` deployed one GPU, `shmSize: on`
    # one byte of shared memory, all without a finding
    checked = []
    for path in _paths(StackSettings):
        field = _field_at(path)
        if not _holds_numbers(field.annotation):
            continue
        for value in (True, False, [True]):
            raw = copy.deepcopy(BASE)
            _put(raw, path, value)
            with pytest.raises(ValidationError) as caught:
                StackSettings.model_validate(raw | {"secretsSet": frozenset()}, by_name=False)
            finding = _finding_from(next(e for e in caught.value.errors() if e["type"] == "with_fix"
                                         and str(e["ctx"].get("field")) == str(path[-1])))
            assert finding.message == f"expects a number, got the boolean {'false' if value is False else 'true'}"
            assert finding.fix.startswith("write the number meant: unquoted, YAML reads yes/on/y/true")
        checked.append(".".join(map(str, path)))
    # the keys users set most, among those checked
    assert {"engine.tensorParallelSize", "engine.gpuMemoryUtilization", "container.shmSize",
            "hardware.deviceIds", "kubernetes.replicas"} <= set(checked)
