"""vLLM's command line from the settings: the flag table rendered in a fixed order.

Same settings, byte-identical argv: a reordered flag would show as a diff in every preview.
Flags whose setting is unset are left out, so vLLM's own default applies.
The official image's entrypoint takes `--model PATH` both as `vllm serve` and as the older
`python3 -m vllm.entrypoints.openai.api_server`, so we never prepend `serve`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from vllm_serving.engine.flags import FLAGS, SECRET_ENV, Flag
from vllm_serving.settings import StackSettings

Value = str | int | float | bool | None


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def flag_value(settings: StackSettings, flag: Flag) -> Value:
    """The value `flag` renders for `settings`; None leaves it out."""
    value: Any = settings
    for part in (flag.attribute or flag.key).split("."):
        value = getattr(value, _snake(part))
    if flag.form == "switch":
        return True if value else None
    if flag.form == "json":
        if value is None:
            return None
        assert isinstance(value, BaseModel)
        # snake_case keys in a fixed order, compact, as vLLM's docs write it
        return json.dumps(value.model_dump(exclude_none=True), separators=(",", ":"))
    assert value is None or isinstance(value, (str, int, float, bool))
    return value


def _text(value: str | int | float) -> str:
    # repr gives the shortest text that round-trips a float: 0.8, not 0.8000000000000000444
    return repr(value) if isinstance(value, float) else str(value)


def render_flags(settings: StackSettings, flags: tuple[Flag, ...]) -> list[str]:
    """`flags` rendered for `settings`, in the table's order; unset ones left out."""
    args: list[str] = []
    for flag in flags:
        value = flag_value(settings, flag)
        if value is None:
            continue
        if value is True:
            args.append(flag.flag)
        elif value is False:  # only negatable flags reach here
            args.append("--no-" + flag.flag.removeprefix("--"))
        else:
            args += [flag.flag, _text(value)]
    return args


def vllm_args(settings: StackSettings) -> tuple[str, ...]:
    """The argv after the image's entrypoint."""
    return (*render_flags(settings, FLAGS), *settings.engine.extra_args)


def vllm_env(settings: StackSettings) -> tuple[tuple[str, str], ...]:
    """Plain (non-secret) environment, sorted by name."""
    return tuple(sorted(settings.engine.env.items()))


def secret_env_names(settings: StackSettings) -> tuple[str, ...]:
    """Env vars whose values come from Pulumi secrets, in a fixed order."""
    return tuple(SECRET_ENV[key] for key in SECRET_ENV if key in settings.secrets_set)
