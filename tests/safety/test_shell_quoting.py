"""No stack value can run a shell command through the rendered `docker run`.

Every word of the command is quoted once: `shlex.split` of the printed text gives back exactly the
words the renderer meant (the line continuations read as one "\\n" word each, as shlex reads a
backslash before a line break), whatever the values hold: quotes, `$(...)`, backquotes, line
breaks, NUL. Tested on the container spec directly (any text in every field) and through the
settings (any text in every key that reaches the command: refused, or rendered as given).
"""

from __future__ import annotations

import shlex
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.stack_builders import shipped_settings, spec_of
from vllm_serving.findings import ConfigError
from vllm_serving.render.docker_container import ContainerSpec, Healthcheck, Mount, container_spec
from vllm_serving.render.docker_run import docker_run_command, docker_run_lines, flag_words
from vllm_serving.settings.stack_config import parse_stack_config
from vllm_serving.spec import resolve

CONTINUATION = "\n"
HOSTILE = st.sampled_from(["$(touch /tmp/pwned)", "`id`", "'", '"', "\\", "a b", "x\ny", ";rm -rf /", "\x00", ""])
TEXT = st.one_of(st.text(max_size=30), HOSTILE, st.builds(lambda a, b: a + b, HOSTILE, st.text(max_size=10)))
BASE = container_spec(spec_of(shipped_settings("v100")))


def expected_words(lines: list[tuple[str, ...]]) -> list[str]:
    words: list[str] = []
    for i, line in enumerate(lines):
        words += ([CONTINUATION] if i else []) + list(line)
    return words


def assert_round_trip(c: ContainerSpec, secrets: dict[str, str] | None = None) -> list[tuple[str, ...]]:
    lines = docker_run_lines(c, secrets)
    assert shlex.split(docker_run_command(c, secrets)) == expected_words(lines)
    return lines


@st.composite
def container_specs(draw: st.DrawFn) -> tuple[ContainerSpec, dict[str, str]]:
    pairs = st.lists(st.tuples(TEXT, TEXT), max_size=3)
    secret_names = draw(st.lists(TEXT, max_size=2, unique=True))
    spec = msgspec.structs.replace(
        BASE,
        name=draw(TEXT), image=draw(TEXT), runtime=draw(st.none() | TEXT), gpus=draw(st.none() | TEXT),
        ipc_mode=draw(TEXT), bind_address=draw(TEXT), security_opts=tuple(draw(st.lists(TEXT, max_size=2))),
        mounts=tuple(Mount("bind", draw(TEXT), draw(TEXT), draw(st.booleans())) for _ in range(draw(
            st.integers(0, 2)))),
        env=tuple(draw(pairs)), secret_env=tuple(secret_names), command=tuple(draw(st.lists(TEXT, max_size=6))),
        healthcheck=Healthcheck(("CMD", *draw(st.lists(TEXT, max_size=3))), draw(TEXT), draw(TEXT), draw(TEXT),
                                draw(st.integers(0, 9))),
        restart=draw(TEXT), log_driver=draw(TEXT), log_opts=tuple(draw(pairs)), labels=tuple(draw(pairs)),
        stop_signal=draw(TEXT),
    )
    return spec, {name: draw(TEXT) for name in secret_names}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(container_specs())
def test_every_field_comes_back_as_the_words_meant(drawn: tuple[ContainerSpec, dict[str, str]]) -> None:
    c, secrets = drawn
    lines = assert_round_trip(c, secrets)
    assert ("--name", c.name) in lines and (c.image,) in lines
    assert not c.runtime or (f"--runtime={c.runtime}",) in lines
    for m in c.mounts:
        assert ("-v", f"{m.source}:{m.target}" + (":ro" if m.read_only else "")) in lines
    for name, value in [*c.env, *secrets.items()]:
        assert ("-e", f"{name}={value}") in lines
    for key, value in c.labels:
        assert ("--label", f"{key}={value}") in lines
    for opt in c.security_opts:
        assert ("--security-opt", opt) in lines
    tail = lines[len(lines) - len(flag_words(c.command)):]
    assert [w for line in tail for w in line] == list(c.command)


# Keys whose value reaches `docker run` (the rest are numbers, booleans or fixed choices).
REACHES_DOCKER_RUN: list[tuple[str, str]] = [
    ("container", "name"), ("container", "runtime"), ("container", "logMaxSize"),
    ("model", "hostPath"), ("model", "containerPath"), ("model", "servedName"),
    ("cache", "hostPath"), ("cache", "volumeName"),
    ("image", "registry"), ("image", "repository"), ("image", "tag"),
    ("engine", "reasoningParser"), ("engine", "toolCallParser"), ("network", "bindAddress"),
]
STACK: dict[str, Any] = {
    "hardware": {"gpu": "A100-80GB", "count": 2},
    "image": {"tag": "v0.19.1"},
    "model": {"name": "Qwen3.5-27B", "hostPath": "/models/qwen"},
    "engine": {"toolCallParser": "hermes", "enableAutoToolChoice": True},
}


def _container(sections: dict[str, Any]) -> ContainerSpec | None:
    """The container of a stack, or None when the settings refuse it."""
    try:
        settings_ = parse_stack_config({f"vllm-serving:{k}": v for k, v in sections.items()})
    except ConfigError:
        return None
    return container_spec(resolve(settings_, "fuzz"))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(REACHES_DOCKER_RUN), TEXT)
def test_a_stack_value_is_refused_or_rendered_as_given(key: tuple[str, str], value: str) -> None:
    section, name = key
    sections = {**STACK, section: {**STACK.get(section, {}), name: value}}
    c = _container(sections)
    if c is None:
        return
    lines = assert_round_trip(c)
    assert any(value in word for line in lines for word in line), (value, lines)


@settings(max_examples=40, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4), st.dictionaries(st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True),
                                                               TEXT, max_size=3))
def test_extra_args_and_env_values_are_refused_or_rendered_as_given(args: list[str], env: dict[str, str]) -> None:
    c = _container({**STACK, "engine": {**STACK["engine"], "extraArgs": args, "env": env}})
    if c is None:
        return
    lines = assert_round_trip(c)
    assert c.command[-len(args):] == tuple(args)
    for name, value in env.items():
        assert ("-e", f"{name}={value}") in lines
