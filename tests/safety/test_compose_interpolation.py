"""The Compose render escapes `$` as `$$` in every value, so `docker compose` substitutes nothing
from the shell that runs it: the container gets exactly the values `docker run` would give it.
(tests/docker_engine/test_compose_dollar.py asks Compose itself, where it is installed.)"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import yaml

from tests.stack_builders import make_spec
from vllm_serving.render.compose_file import compose_document, compose_yaml, escape_interpolation
from vllm_serving.render.docker_container import ContainerSpec, container_spec

# What Compose would expand: variables in both forms, defaults, errors, and `$` runs of each length.
HOSTILE = ("$HOME", "${HOME}", "${UNSET:-fallback}", "${X:?boom}", "a$$b", "$$$", "price: 5$", "$(id)")
LONE_DOLLAR = re.compile(r"(?<!\$)(?:\$\$)*\$(?!\$)")


def hostile_container() -> ContainerSpec:
    """A shipped stack's container with `$` in every value a user controls."""
    c = container_spec(make_spec("a100", secrets=("apiKey",)))
    return msgspec.structs.replace(
        c,
        command=(*c.command, *(f"--override-generation-config={v}" for v in HOSTILE)),
        env=(*c.env, *((f"VAR_{i}", v) for i, v in enumerate(HOSTILE))),
        labels=(*c.labels, ("vllm-serving.note", HOSTILE[0])),
        mounts=(msgspec.structs.replace(c.mounts[0], source="/data/$HOME/weights"), *c.mounts[1:]),
    )


def every_dollar_doubled(text: str) -> bool:
    """No `$` stands alone or in an odd run: Compose reads `$$` as `$` and expands nothing."""
    return LONE_DOLLAR.search(text) is None


def compose_unescaped(value: Any) -> Any:
    """What Compose makes of the file's values: `$$` read back as `$`."""
    if isinstance(value, str):
        return value.replace("$$", "$")
    if isinstance(value, dict):
        return {k: compose_unescaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [compose_unescaped(v) for v in value]
    return value


def test_the_check_itself_finds_a_lone_dollar() -> None:
    assert not every_dollar_doubled("a: $HOME")
    assert not every_dollar_doubled("a: $$$")
    assert every_dollar_doubled("a: $$HOME and $$$$")


def test_every_dollar_in_the_compose_file_is_doubled() -> None:
    c = hostile_container()
    secrets = {"VLLM_API_KEY": "k$y-${HOME}"}
    text = compose_yaml(c, secrets)
    assert text.count("$") >= 2 * sum(v.count("$") for v in HOSTILE)
    assert every_dollar_doubled(text), [line for line in text.splitlines() if LONE_DOLLAR.search(line)]


def test_compose_reads_back_exactly_the_rendered_values() -> None:
    c = hostile_container()
    secrets = {"VLLM_API_KEY": "k$y-${HOME}"}
    read_back = compose_unescaped(yaml.safe_load(compose_yaml(c, secrets)))
    assert read_back == compose_document(c, secrets)
    service = read_back["services"][c.name]
    assert service["environment"]["VLLM_API_KEY"] == "k$y-${HOME}"
    assert [service["environment"][f"VAR_{i}"] for i in range(len(HOSTILE))] == list(HOSTILE)
    assert service["command"][-len(HOSTILE):] == [f"--override-generation-config={v}" for v in HOSTILE]
    assert service["volumes"][0].startswith("/data/$HOME/weights:")


def test_keys_are_left_alone() -> None:
    """Compose interpolates values, not keys; a key keeps its spelling."""
    assert escape_interpolation({"$K": ["$v", {"$k": "$w"}], "n": 1}) == {"$K": ["$$v", {"$k": "$$w"}], "n": 1}


def test_a_stack_without_dollars_renders_as_before() -> None:
    c = container_spec(make_spec("a100"))
    assert yaml.safe_load(compose_yaml(c)) == compose_document(c)
